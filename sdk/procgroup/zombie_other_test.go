//go:build unix && !linux

package procgroup_test

func zombie(pid int) bool { return false }
