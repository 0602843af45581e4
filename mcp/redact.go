package mcp

import "github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/secret"

// Secrets an agent hands over in arguments must reach the tool and nothing
// else (see engine/secret/redact.go, the one policy, which the workbench's
// copy and export share): the copy of the arguments given to the engine is
// redacted, and so are the error texts an agent reads.
var (
	redactURLs = secret.RedactURLs
	secretArg  = secret.IsSecretName
	redactArgs = secret.RedactArgs
	redact     = secret.Redact
)
