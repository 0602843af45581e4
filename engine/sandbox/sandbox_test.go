package sandbox

import (
	"strings"
	"testing"
)

func TestDefaultVariant(t *testing.T) {
	t.Parallel()
	for configured, want := range map[string]string{
		"":                 Eval,
		"jupyter-server":   Eval, // the reference falls back to eval
		" Jupyter-Server ": Eval,
		"eval":             Eval,
		"Docker":           "docker",
	} {
		if got := DefaultVariant(configured); got != want {
			t.Errorf("DefaultVariant(%q) = %q, want %q", configured, got, want)
		}
	}
}

func TestCheckKnowsEveryReferenceVariant(t *testing.T) {
	t.Parallel()
	// The variants the reference's gpu description names.
	reference := []string{"coreweave", "datalayer", "daytona", "kaggle", "modal", "e2b", "cloudflare", "docker", "eval", "google-colab", "jupyter-server", "monty"}
	for _, v := range reference {
		err := Check(v, Args{})
		launchable := v == Eval || v == JupyterServer
		if launchable != (err == nil) {
			t.Errorf("Check(%q) = %v", v, err)
		}
		if err != nil && (!IsRefusal(err) || !strings.Contains(err.Error(), "it can launch the eval and jupyter-server variants")) {
			t.Errorf("Check(%q) refusal does not say what can launch: %v", v, err)
		}
	}
	if got := strings.Join(GPUVariants(), ","); got != "coreweave,datalayer,daytona,kaggle,modal" {
		t.Errorf("GPUVariants = %s", got)
	}
	if len(Known()) != len(reference) {
		t.Errorf("Known = %v, want the %d of the reference", Known(), len(reference))
	}
}
