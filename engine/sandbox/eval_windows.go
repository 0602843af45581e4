package sandbox

// evalUnsupported says why the eval variant cannot run on Windows: the
// driver's protocol travels on inherited file descriptors 3 and 4, and
// Windows passes a child only stdin, stdout and stderr (os/exec's
// ExtraFiles is not supported there).
var evalUnsupported = refusef("the eval sandbox cannot run on Windows (its interpreter talks to this server over inherited pipes, which Windows does not pass on): launch the jupyter-server variant instead")
