package pmtest_test

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// protocolDoc is the normative protocol document the checks enforce.
const protocolDoc = "../../docs/protocol.md"

// notChecked are the sections whose MUSTs no check of the suite can
// observe from outside the PM, each with the reason. A section that gains a
// MUST must either be enforced by a check (pmtest.Sections) or be listed
// here.
var notChecked = map[string]string{
	"§1":   "the document's conventions, not a requirement",
	"§3.1": "a PM that prompts is seen only as a hang, which every check's timeout already reports",
	"§7.2": "a rule for hosts (accept any data, or none); the host's own tests hold symposium-pm to it",
	"§10":  "which variables a PM looks up is its ecosystem's business; the suite cannot know what to look for",
}

// docSections reads the document's headings (§N or §N.M) and, for each,
// whether its text holds a MUST.
func docSections(t *testing.T) (order []string, must map[string]bool, body map[string]string) {
	t.Helper()
	f, err := os.Open(protocolDoc)
	if err != nil {
		t.Fatalf("the protocol document: %v", err)
	}
	defer f.Close()
	heading := regexp.MustCompile(`^#{2,3} (§[0-9]+(?:\.[0-9]+)?) `)
	must, body = map[string]bool{}, map[string]string{}
	cur := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := heading.FindStringSubmatch(line); m != nil {
			cur = m[1]
			order = append(order, cur)
			continue
		}
		if cur == "" {
			continue
		}
		body[cur] += line + "\n"
		if strings.Contains(line, "MUST") {
			must[cur] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return order, must, body
}

// TestEveryCheckNamesItsSections keeps each check tied to existing sections
// of the protocol document, and §12's table identical to the suite.
func TestEveryCheckNamesItsSections(t *testing.T) {
	order, _, body := docSections(t)
	var want []string
	for _, name := range pmtest.Checks() {
		secs := pmtest.Sections(name)
		if len(secs) == 0 {
			t.Errorf("check %s names no section of %s", name, protocolDoc)
		}
		for _, s := range secs {
			if !slices.Contains(order, s) {
				t.Errorf("check %s names %s, which is no heading of %s", name, s, protocolDoc)
			}
		}
		want = append(want, fmt.Sprintf("| `%s` | %s |", name, strings.Join(secs, ", ")))
	}
	var got []string
	for _, line := range strings.Split(body["§12"], "\n") {
		if strings.HasPrefix(line, "| `") {
			got = append(got, line)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the table of §12 in %s does not list the suite's checks and their sections; it should read:\n%s", protocolDoc, strings.Join(want, "\n"))
	}
}

// TestEveryMUSTHasACheck fails when a section of the protocol document
// holds a MUST that no check enforces and notChecked does not explain.
func TestEveryMUSTHasACheck(t *testing.T) {
	order, must, _ := docSections(t)
	checked := map[string]bool{}
	for _, name := range pmtest.Checks() {
		for _, s := range pmtest.Sections(name) {
			checked[s] = true
		}
	}
	for _, s := range order {
		_, exempt := notChecked[s]
		switch {
		case must[s] && !checked[s] && !exempt:
			t.Errorf("%s of %s holds a MUST that no check enforces: add a check naming it, or say in notChecked why none can", s, protocolDoc)
		case exempt && checked[s]:
			t.Errorf("%s is both enforced by a check and listed in notChecked", s)
		case exempt && !must[s]:
			t.Errorf("%s is listed in notChecked but holds no MUST", s)
		}
	}
}
