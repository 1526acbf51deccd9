//go:build darwin || freebsd || netbsd

package depcache

import "syscall"

func ctime(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
