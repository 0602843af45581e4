package main

import "errors"

// hideSecrets cannot start a Windows process over in place: any process of
// the same user may read another's environment there (its memory, in
// fact), so a secret given in the environment stays readable by code
// running as our user. The README says so; a token file is the way there.
func hideSecrets(*config, []string) error {
	return errors.New("on Windows a token given in the environment or on the command line stays readable by programs running as you; use --mcp-token-file")
}
