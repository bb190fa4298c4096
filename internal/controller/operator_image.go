package controller

import "github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"

// The operator's image, as the Backup controller reads it; defined once in internal/specs.
const (
	DefaultOperatorImage = specs.DefaultOperatorImage
	OperatorImageEnv     = specs.OperatorImageEnv
)
