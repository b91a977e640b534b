//go:build !unix

package main

import "os"

// faults is 0 where the system does not report a process's page faults.
func faults(*os.ProcessState) int64 { return 0 }
