package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// editCell is the index of the code cell whose source edit_cell_source
// toggles between the two markers.
const editCell = 1000

const (
	markerA = "marker_value_alpha"
	markerB = "marker_value_beta"
)

// bigNotebook builds an nbformat 4.5 notebook of n cells, about
// bytesPerCell each once written the way Jupyter writes notebooks (indent
// 1): code cells with a stream output and markdown cells, each with its own
// id, the way a long working notebook looks.
func bigNotebook(n, bytesPerCell int) ([]byte, error) {
	type cell map[string]any
	cells := make([]cell, n)
	lines := func(prefix string, count, width int) []string {
		out := make([]string, count)
		for i := range out {
			s := fmt.Sprintf("%s %d: ", prefix, i)
			s += strings.Repeat("x", max(0, width-len(s)))
			out[i] = s + "\n"
		}
		out[count-1] = strings.TrimSuffix(out[count-1], "\n")
		return out
	}
	// About half the bytes go to the source, half to outputs; a line costs
	// its width plus JSON quoting and indentation.
	const width = 60
	perLine := width + 12
	src := max(1, bytesPerCell/2/perLine)
	for i := range cells {
		id := fmt.Sprintf("bench-%04d", i)
		if i%2 == 1 && i != editCell {
			cells[i] = cell{"cell_type": "markdown", "id": id, "metadata": map[string]any{},
				"source": lines(fmt.Sprintf("## note %d", i), 2*src, width)}
			continue
		}
		source := lines(fmt.Sprintf("# cell %d", i), src, width)
		if i == editCell {
			source = append([]string{"value = '" + markerA + "'\n"}, source...)
		}
		cells[i] = cell{
			"cell_type": "code", "id": id, "metadata": map[string]any{},
			"execution_count": i + 1, "source": source,
			"outputs": []any{map[string]any{
				"output_type": "stream", "name": "stdout",
				"text": lines(fmt.Sprintf("out %d", i), src, width),
			}},
		}
	}
	nb := map[string]any{
		"nbformat": 4, "nbformat_minor": 5, "cells": cells,
		"metadata": map[string]any{
			"kernelspec":    map[string]any{"name": "python3", "display_name": "Python 3", "language": "python"},
			"language_info": map[string]any{"name": "python"},
		},
	}
	return json.MarshalIndent(nb, "", " ")
}
