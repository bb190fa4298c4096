package cluster

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

func TestMergeEvents(t *testing.T) {
	got := mergeEvents([]kit.Event{evSecretCreated.With("a"), evInstanceCreated.With("db-1"),
		evSecretCreated.With("b")})
	if len(got) != 2 || got[0].Message != "Created Secret a; Created Secret b" || got[1].Kind.Reason != "InstanceCreated" {
		t.Errorf("Events of one reason fold into one, in first-seen order: %+v", got)
	}
}
