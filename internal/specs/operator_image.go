package specs

// OperatorImageEnv names the environment variable holding the operator's own image, which the
// init containers that copy the manager binary run; DefaultOperatorImage when unset.
const OperatorImageEnv = "OPERATOR_IMAGE_NAME"

// DefaultOperatorImage runs those init containers when no operator image is given.
const DefaultOperatorImage = "cloudnative-mysql/operator:dev"
