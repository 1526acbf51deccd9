//go:build linux || solaris || illumos || openbsd || dragonfly

package depcache

import "syscall"

func ctime(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
