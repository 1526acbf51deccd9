package pmtest_test

import (
	"context"
	"fmt"
	"log"
	"regexp"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// A Go PM's own test runs the suite against its built binary, in a
// workspace that gives list_deps and active_plugins something to answer.
func ExampleRun() {
	_ = func(t *testing.T) {
		pmtest.Run(t, []string{"/path/to/symposium-pm-mine", "--flag"},
			pmtest.WithWorkspace("testdata/workspace"),
			pmtest.WithEnv("MINE_REGISTRY", "http://127.0.0.1:9/"),
			pmtest.WithFetchIDs(protocol.PackageID{PM: "mine", Name: "agent-skills", Version: "1.0.0"}))
	}
}

// Check returns the report for any program, whatever its language.
func ExampleCheck() {
	rep, err := pmtest.Check(context.Background(), []string{"python3", "my_pm.py"},
		pmtest.WithRun(regexp.MustCompile(`^(handshake|eof-drain)$`)))
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rep.Failures() {
		fmt.Printf("%s: %s\n", r.Name, r.Message)
	}
}
