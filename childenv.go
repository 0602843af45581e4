package main

import "os"

// scrubEnvironment removes every variable that is one of our options
// (MCP_TOKEN, JUPYTER_TOKEN, PORT, ...) from this process's environment once
// the configuration has been read from it. Every process we start inherits
// what is left: the managed jupyter-server and through it every kernel, the
// eval sandbox's interpreter, and what libraries exec for us (the clipboard
// helper). Notebook code could otherwise read the endpoint's bearer token in
// os.environ and call the server around the approval gate. The list is the
// option table itself, so a new option is covered the day it is added.
//
// The secrets themselves never reach this environment: main starts over
// without them (secrets.go), since /proc/PID/environ shows what a process
// was started with whatever it unsets later. Children that need a secret
// get it explicitly: the managed server receives its own random token in a
// variable its bootstrap removes before its kernels start. Its own
// /proc/PID/environ still shows that token, and so does the server's
// runtime file (jpserver-PID.json), both readable by its kernels: the token
// of the Jupyter server that runs them gives kernel code nothing it lacks
// (it runs as the same user, beside the same files).
func scrubEnvironment(cfg *config) {
	for _, name := range cfg.envNames() {
		os.Unsetenv(name)
	}
}

// envNames lists the environment variables of the options.
func (c *config) envNames() []string {
	var names []string
	for _, o := range c.opts {
		if o.env != "" {
			names = append(names, o.env)
		}
	}
	return names
}
