package check

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for people: one line per check (status, ID,
// title), with the detail, what was sent and what came back indented under
// each WARN and FAIL (and the reason under each SKIP), then a summary line.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	width := 0
	for _, res := range r.Results {
		width = max(width, len(res.ID))
	}
	fmt.Fprintf(bw, "target %s (%s)\n", r.Target, r.Era)
	for _, res := range r.Results {
		fmt.Fprintf(bw, "%-4s  %-*s  %s\n", res.Status, width, res.ID, res.Title)
		switch res.Status {
		case Warn, Fail:
			indent(bw, "why", res.Detail)
			indent(bw, "sent", res.Sent)
			indent(bw, "got", res.Got)
			indent(bw, "spec", res.Spec)
		case Skip:
			indent(bw, "why", res.Detail)
		}
	}
	fmt.Fprintf(bw, "%d passed, %d warned, %d failed, %d skipped\n", r.Pass, r.Warn, r.Fail, r.Skip)
	return bw.Flush()
}

func indent(w io.Writer, label, s string) {
	if s == "" {
		return
	}
	s = strings.ReplaceAll(s, "\n", " ")
	fmt.Fprintf(w, "      %-5s %s\n", label+":", s)
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
