package plm

import (
	apiplm "github.com/gatewall/gatewall/api/plm"
)

// BundleRef is one bundle PLM reports in an APPolicy's or APLogConf's status.
type BundleRef struct {
	// Location is where PLM stored the bundle: s3://bucket/key.
	Location string
	// Sha256 is the bundle's checksum: 64 lower-case hex digits.
	Sha256 string
	// Revision identifies the PLM status that reports the bundle (its
	// status.processing.datetime); "" when unknown. An IntegrityError at a
	// location is not retried while that location stays wanted with the same
	// revision: PLM processing the object again (a new revision, even with
	// the same location and sha256) gives the location a new chance.
	Revision string
}

// Validate checks the reference the way Want does, so that callers can report
// a bad status before asking for a fetch.
func (r BundleRef) Validate() error {
	if err := apiplm.ValidateSha256(r.Sha256); err != nil {
		return err
	}
	_, _, err := apiplm.ParseLocation(r.Location)
	return err
}
