package invoker

import "os"

// system is the process tree of this machine: /proc.
func system() (Tree, string) { return ProcFS{FS: os.DirFS("/proc")}, "" }
