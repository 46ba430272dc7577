package gate

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/internal/refusal"
	"github.com/gatehouse/gatehouse/trust"
)

// ConfigReport is what the gates would refuse in a checkout, for the audit:
// the same decision a phone's operation would meet, laid out entry by entry.
type ConfigReport struct {
	Findings     []Finding `json:"findings"`
	Submodules   bool      `json:"submodules,omitempty"`
	PartialClone bool      `json:"partialClone,omitempty"`
	TooLarge     bool      `json:"tooLarge,omitempty"`
	// ReadSentence and ChangeSentence are what a phone with the switch off
	// is told by each gate ("" when that gate lets it through).
	ReadSentence   string `json:"readSentence,omitempty"`
	ChangeSentence string `json:"changeSentence,omitempty"`
}

// AuditConfig lists, for the closed gate t (a phone with the switch off),
// every local and worktree config entry the Read or the Change gate refuses,
// with why, plus submodules and a partial clone. It starts at most one git
// process (two with per-worktree config), as a decision does.
func (r *Repo) AuditConfig(ctx context.Context, t trust.Trust) (*ConfigReport, error) {
	if !t.Closed() {
		return &ConfigReport{Findings: []Finding{}}, nil
	}
	d, err := r.cachedDecision(ctx, t)
	if err != nil && !errors.Is(err, ErrRefused) {
		return nil, err
	}
	rep := &ConfigReport{Findings: []Finding{}, Submodules: r.hasSubmodules()}
	if err != nil { // git could not read the config at all
		rep.ReadSentence, rep.ChangeSentence = refusal.Sentence(err), refusal.Sentence(err)
		return rep, nil
	}
	rep.Findings = append(rep.Findings, d.findings...)
	rep.TooLarge = d.tooLarge
	for _, f := range d.findings {
		if f.Key == "extensions.partialclone" || (len(f.Key) > 9 && f.Key[len(f.Key)-9:] == ".promisor") {
			rep.PartialClone = true
		}
	}
	const action = "use Git on this checkout"
	if err := d.check(readGate, action); err != nil {
		rep.ReadSentence = refusal.Sentence(err)
	}
	if err := d.check(changeGate, action); err != nil {
		rep.ChangeSentence = refusal.Sentence(err)
	} else if rep.Submodules {
		rep.ChangeSentence = refusal.Sentence(refuseSubmodules(action))
	}
	return rep, nil
}
