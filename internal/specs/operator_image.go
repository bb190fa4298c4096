package specs

// OperatorImageEnv names the environment variable holding the operator's own image, which the
// instance Pods' bootstrap init container and the backup Jobs' init container run.
const OperatorImageEnv = "OPERATOR_IMAGE_NAME"

// DefaultOperatorImage runs those init containers when OperatorImageEnv is unset.
const DefaultOperatorImage = "cloudnative-mysql/operator:dev"
