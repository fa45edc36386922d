package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Check is one check of a scenario's checks.json.
type Check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// Scenario is the outcome of one scenario.
type Scenario struct {
	Name   string
	Checks []Check
}

// Counts returns the number of checks per status.
func (s Scenario) Counts() map[string]int {
	c := map[string]int{}
	for _, ch := range s.Checks {
		c[ch.Status]++
	}
	return c
}

// Problem returns why the scenario does not pass strictly, or "".
func (s Scenario) Problem() string {
	c := s.Counts()
	var bad []string
	for _, ch := range s.Checks {
		switch ch.Status {
		case "FAILURE", "WARNING", "SKIPPED":
			msg := ch.Status + " " + ch.ID
			if ch.ErrorMessage != "" {
				msg += ": " + ch.ErrorMessage
			}
			bad = append(bad, msg)
		}
	}
	if len(bad) > 0 {
		return strings.Join(bad, "; ")
	}
	if c["SUCCESS"] == 0 {
		return fmt.Sprintf("no successful check (counts %v): the scenario passed vacuously", c)
	}
	return ""
}

// resultDir matches a scenario's result directory: server scenarios are
// prefixed "server-", client ones are not.
var resultDir = regexp.MustCompile(`^(server-)?(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d+Z$`)

// ReadResults reads every scenario result directory under dir. Scenarios
// named with a slash ("auth/metadata-default") have their results one
// directory down ("auth/metadata-default-<time>").
func ReadResults(dir string) (map[string]Scenario, error) {
	out := map[string]Scenario{}
	return out, readResults(dir, "", out)
}

func readResults(dir, prefix string, out map[string]Scenario) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil {
			if prefix == "" {
				if err := readResults(filepath.Join(dir, e.Name()), e.Name()+"/", out); err != nil {
					return err
				}
			}
			continue
		}
		name := prefix + m[2]
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			return fmt.Errorf("scenario %s: %w", name, err)
		}
		var checks []Check
		if err := json.Unmarshal(b, &checks); err != nil {
			return fmt.Errorf("scenario %s: checks.json: %w", name, err)
		}
		out[name] = Scenario{Name: name, Checks: checks}
	}
	return nil
}

// Judge returns one line per wanted scenario that is missing or does not
// pass strictly.
func Judge(results map[string]Scenario, wanted []string) []string {
	var problems []string
	for _, name := range wanted {
		s, ok := results[name]
		if !ok {
			problems = append(problems, name+": no result (the scenario did not run)")
			continue
		}
		if p := s.Problem(); p != "" {
			problems = append(problems, name+": "+p)
		}
	}
	sort.Strings(problems)
	return problems
}

// StillSkipped returns why the scenario name, which the suite cannot
// exercise yet, is not as expected: it must have run, with exactly one
// check, SKIPPED. Anything else (a failure, or checks that now run) is
// reported, so that the scenario is then judged strictly.
func StillSkipped(results map[string]Scenario, name string) string {
	s, ok := results[name]
	if !ok {
		return name + ": no result (the scenario did not run)"
	}
	if len(s.Checks) != 1 || s.Checks[0].Status != "SKIPPED" {
		return fmt.Sprintf("%s: expected one SKIPPED check while the suite cannot exercise it, got %v: judge it strictly now", name, s.Counts())
	}
	return ""
}

var listItem = regexp.MustCompile(`^\s*-\s+(\S+)`)

// ParseScenarioList extracts the scenario names of one section ("Server
// scenarios" or "Client scenarios") of `conformance list` output.
func ParseScenarioList(out, section string) []string {
	var names []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), section) {
			in = true
			continue
		}
		if in {
			if m := listItem.FindStringSubmatch(line); m != nil {
				names = append(names, m[1])
				continue
			}
			if strings.TrimSpace(line) != "" {
				in = false
			}
		}
	}
	return names
}
