package pmtest

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv("PMTEST_RAW_PM"); ok {
		os.Exit(rawPM(mode))
	}
	if mode, ok := os.LookupEnv(procModeEnv); ok {
		os.Exit(procMode(mode))
	}
	os.Exit(m.Run())
}
