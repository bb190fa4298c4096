package kit

import (
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ConflictRetry is how soon a reconcile that lost an optimistic-lock race runs again.
const ConflictRetry = 100 * time.Millisecond

// ConflictOr turns a lost optimistic-lock race into a quick retry and passes other errors on.
func ConflictOr(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: ConflictRetry}, nil
	}
	return ctrl.Result{}, err
}
