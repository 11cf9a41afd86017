// Package plm holds the part of PLM's APPolicy and APLogConf objects that
// Gatewall reads: their status. PLM (F5 WAF Policy Lifecycle Management)
// compiles policies and writes where the compiled bundle is; Gatewall never
// writes these objects.
//
// +kubebuilder:object:generate=true
package plm

// API groups PLM's APPolicy and APLogConf have been published in.
const (
	// GroupAppProtect is the group PLM ships (appprotect.f5.com/v1).
	GroupAppProtect = "appprotect.f5.com"
	// GroupWAF is the group of the WAF proposal (waf.f5.com/v1alpha1).
	GroupWAF = "waf.f5.com"
)

// Bundle states PLM reports.
const (
	BundleStatePending    = "pending"
	BundleStateProcessing = "processing"
	BundleStateReady      = "ready"
	BundleStateInvalid    = "invalid"
)

// Status is the status of an APPolicy or APLogConf.
type Status struct {
	// Bundle describes the compiled bundle.
	// +optional
	Bundle *Bundle `json:"bundle,omitempty"`

	// Processing describes the last compilation.
	// +optional
	Processing *Processing `json:"processing,omitempty"`
}

// Bundle describes a compiled policy or log profile bundle.
type Bundle struct {
	// State of the bundle: pending, processing, ready or invalid.
	// +optional
	// +kubebuilder:validation:Enum=pending;processing;ready;invalid
	State string `json:"state,omitempty"`

	// Location of the bundle in PLM storage, s3://bucket/key; set when ready.
	// +optional
	Location string `json:"location,omitempty"`

	// Sha256 of the bundle, 64 hex digits.
	// +optional
	Sha256 string `json:"sha256,omitempty"`

	// CompilerVersion is the version of the compiler that built the bundle.
	// +optional
	CompilerVersion string `json:"compilerVersion,omitempty"`

	// Signatures are the dates of the signature sets compiled in.
	// +optional
	Signatures *Signatures `json:"signatures,omitempty"`
}

// Signatures are the dates of the signature sets in a bundle.
type Signatures struct {
	// AttackSignatures is the date of the attack signature set compiled in.
	// +optional
	AttackSignatures string `json:"attackSignatures,omitempty"`
	// BotSignatures is the date of the bot signature set compiled in.
	// +optional
	BotSignatures string `json:"botSignatures,omitempty"`
	// ThreatCampaigns is the date of the threat campaign set compiled in.
	// +optional
	ThreatCampaigns string `json:"threatCampaigns,omitempty"`
}

// Processing describes PLM's last compilation.
type Processing struct {
	// IsCompiled is false when the spec referenced a precompiled bundle.
	// +optional
	IsCompiled bool `json:"isCompiled,omitempty"`

	// Datetime of the last compilation.
	// +optional
	Datetime string `json:"datetime,omitempty"`

	// Errors of the last compilation; set when the state is invalid.
	// +optional
	Errors []string `json:"errors,omitempty"`
}
