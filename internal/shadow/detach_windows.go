package shadow

import "os/exec"

func detach(*exec.Cmd) {}
