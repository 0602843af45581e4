"""Regenerates the notebooks the engine/notebook tests round-trip.

Run with the Python that has Jupyter installed:

    /usr/bin/python3 engine/notebook/testdata/generate.py

Every file is written by nbformat itself, so the tests can demand that our
writer reproduces it byte for byte.
"""
import json
import os

import nbformat
from nbformat.v4 import (
    new_code_cell,
    new_markdown_cell,
    new_notebook,
    new_output,
    new_raw_cell,
)

HERE = os.path.dirname(os.path.abspath(__file__))
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n"
)


def executed():
    """A notebook run by a real kernel: plots, HTML, errors, streams."""
    from nbclient import NotebookClient

    nb = new_notebook()
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    nb.cells = [
        new_markdown_cell("# Executed\n\nÜnïcödé, emoji 🎉, CJK 漢字, <b>&amp;</b>"),
        new_code_cell("print('hello')\nimport sys\nprint('to stderr', file=sys.stderr)\nprint('tab\\tand\\r\\ncrlf and \\x1b[31mansi\\x1b[0m')"),
        new_code_cell("%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.title('π ≈ 3.14')"),
        new_code_cell("from IPython.display import HTML, JSON, Markdown, display\ndisplay(HTML('<table><tr><td>a &amp; b</td></tr></table>'))\ndisplay(Markdown('**bold**\\n\\n- item'))\ndisplay(JSON({'a': [1, 2.5, None, True], 'b': {'c': 'ü'}}))\n{'x': 1e-05, 'y': 1e16}"),
        new_code_cell("1 / 0"),
        new_code_cell("for i in range(3):\n    print(i, end='')\n"),
        new_code_cell(""),
        new_raw_cell("raw\u2028line sep\u0085next line\x0bvt"),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    return nb


def handmade():
    """Unknown keys and metadata, odd characters, numbers, attachments."""
    nb = new_notebook()
    nb.metadata.update(
        {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "zeta": {"floats": [0.1, 1.5, 1e-05, 0.0001, 1e16, 1e15, 123456789.125, -0.0, 2.5e-300],
                     "ints": [0, -7, 12345678901234567890123],
                     "nested": {"b": [], "a": {}, "ä": None, "Z": False}},
            "ünïcode kéy": "välue \u2028 with line separator",
            "controls": "\x00\x01\x1f\x7f\"\\/<>&",
            "emoji": "😀",
        }
    )
    nb["x_custom_top"] = {"kept": True}
    md = new_markdown_cell("![img](attachment:a.png)\nline two\r\nwindows\rmac\x0cff\x1cfs", attachments={
        "a.png": {"image/png": PNG, "text/plain": "alt\ntext"},
    })
    md["x_cell_extra"] = [1, "two"]
    code = new_code_cell(
        "x = 1\n\n\ny = 'ünï'\n",
        execution_count=3,
        metadata={"tags": ["a", "b"], "collapsed": False, "scrolled": "auto", "jupyter": {"source_hidden": True}},
        outputs=[
            new_output("stream", name="stdout", text="one\ntwo\n\nthree"),
            new_output("stream", name="stderr", text=""),
            new_output(
                "execute_result",
                execution_count=3,
                data={
                    "text/plain": "multi\nline\n",
                    "text/html": "<div>\n<p>hi</p>\n</div>",
                    "application/json": {"k": [1, 2, {"z": 1, "a": 2}]},
                    "application/vnd.custom+json": {"n": 1.0},
                    "application/javascript": "var a = 1;\nvar b = 2;",
                    "image/svg+xml": "<svg>\n</svg>\n",
                    "image/png": PNG,
                },
                metadata={"image/png": {"width": 10, "height": 20}},
            ),
            new_output("display_data", data={"text/plain": "shown"}, metadata={}),
            new_output("error", ename="ValueError", evalue="bad ü",
                       traceback=["\x1b[0;31mValueError\x1b[0m", "line 2"]),
        ],
    )
    code.outputs[0]["x_output_extra"] = "kept"
    empty = new_code_cell("")
    nb.cells = [md, code, empty, new_raw_cell("", metadata={"format": "text/x-python"})]
    return nb


def v44():
    """An nbformat 4.4 notebook: cells have no ids."""
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Old\n", "notebook"]},
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["1 + 1"]},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 4,
    }
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def main():
    nbformat.write(executed(), os.path.join(HERE, "executed.ipynb"))
    nbformat.write(handmade(), os.path.join(HERE, "handmade.ipynb"))
    nbformat.write(new_notebook(), os.path.join(HERE, "empty.ipynb"))
    with open(os.path.join(HERE, "v44.ipynb"), "w", encoding="utf-8") as f:
        f.write(v44())


if __name__ == "__main__":
    main()
