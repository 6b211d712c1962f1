package rules

import "slices"

// The purposes, as declared in the configuration (usage.purposes,
// identity.users[].purposes, identity.client_ranges[].purposes): the usage
// category labels of draft-ietf-aipref-vocab-07 section 6.1, plus the one
// Content Signals label that has no vocab-07 counterpart.
const (
	// TrainAI is training AI models (vocab-07 6.1 "train-ai";
	// Content-Signal "ai-train").
	TrainAI = "train-ai"
	// Search is building a search index and showing results that point
	// back to the content (vocab-07 6.1 "search"; Content-Signal
	// "search").
	Search = "search"
	// AIInput is feeding content into an AI model at answer time
	// (retrieval-augmented generation, grounding; Content-Signal
	// "ai-input"). No vocab-07 label covers it, so only Content-Signal
	// states a preference for it.
	AIInput = "ai-input"
)

// Purposes returns the labels a purpose may be declared as, in the order
// audit lines list them.
func Purposes() []string { return []string{TrainAI, Search, AIInput} }

// IsPurpose reports whether s is one of Purposes.
func IsPurpose(s string) bool { return slices.Contains(Purposes(), s) }
