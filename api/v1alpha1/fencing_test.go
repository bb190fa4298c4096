package v1alpha1

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseFencedInstances(t *testing.T) {
	cases := []struct {
		name    string
		value   string
		want    []string
		wantErr string
	}{
		{"no annotation fences nothing", "", nil, ""},
		{"an empty list fences nothing", "[]", nil, ""},
		{"JSON null fences nothing", "null", nil, ""},
		{"one instance", `["db-2"]`, []string{"db-2"}, ""},
		{"names come back sorted without duplicates", `["db-3","db-1","db-3"]`, []string{"db-1", "db-3"}, ""},
		{"a star fences every instance and absorbs the names", `["db-1","*"]`, []string{"*"}, ""},
		{"a bare name is not JSON", "db-2", nil, "must be a JSON list of instance names"},
		{"a JSON string is not a list", `"db-2"`, nil, "must be a JSON list of instance names"},
		{"an object is not a list", `{"db-2":true}`, nil, "must be a JSON list of instance names"},
		{"numbers are not names", `[2]`, nil, "must be a JSON list of instance names"},
		{"a truncated list", `["db-2"`, nil, "must be a JSON list of instance names"},
		{"an empty name", `["db-2",""]`, nil, "lists an empty instance name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseFencedInstances(c.value)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), FencedInstancesAnnotation) {
					t.Fatalf("ParseFencedInstances(%q) error = %v, want one naming the annotation and %q", c.value, err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("ParseFencedInstances(%q) = %q, %v; want %q", c.value, got, err, c.want)
			}
		})
	}
}

func TestFormatFencedInstancesRoundTrips(t *testing.T) {
	cases := []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{}, ""},
		{[]string{"db-3", "db-1", "db-1"}, `["db-1","db-3"]`},
		{[]string{"db-3", "*"}, `["*"]`},
	}
	for _, c := range cases {
		got := FormatFencedInstances(c.names)
		if got != c.want {
			t.Errorf("FormatFencedInstances(%q) = %q, want %q", c.names, got, c.want)
		}
		back, err := ParseFencedInstances(got)
		if err != nil || !slices.Equal(back, normalizeFenced(c.names)) {
			t.Errorf("parsing %q back gave %q, %v", got, back, err)
		}
	}
}

func TestFencedInstancesContain(t *testing.T) {
	cases := []struct {
		name  string
		names []string
		who   string
		want  bool
	}{
		{"nothing fenced", nil, "db-1", false},
		{"a listed instance is fenced", []string{"db-1", "db-2"}, "db-2", true},
		{"an unlisted instance is not", []string{"db-1"}, "db-2", false},
		{"a star fences every instance", []string{"*"}, "db-7", true},
		{"a prefix is not a name", []string{"db-1"}, "db-10", false},
	}
	for _, c := range cases {
		if got := FencedInstancesContain(c.names, c.who); got != c.want {
			t.Errorf("%s: FencedInstancesContain(%q, %q) = %v", c.name, c.names, c.who, got)
		}
	}
}

func TestAddFencedInstance(t *testing.T) {
	cases := []struct {
		name        string
		names       []string
		add         string
		want        []string
		wantChanged bool
	}{
		{"fencing the first instance", nil, "db-2", []string{"db-2"}, true},
		{"fencing a second instance keeps the first", []string{"db-2"}, "db-1", []string{"db-1", "db-2"}, true},
		{"fencing a fenced instance changes nothing", []string{"db-2"}, "db-2", []string{"db-2"}, false},
		{"fencing all replaces the list", []string{"db-2"}, "*", []string{"*"}, true},
		{"fencing all twice changes nothing", []string{"*"}, "*", []string{"*"}, false},
		{"fencing one while all are fenced changes nothing", []string{"*"}, "db-2", []string{"*"}, false},
	}
	for _, c := range cases {
		in := slices.Clone(c.names)
		got, changed := AddFencedInstance(in, c.add)
		if !slices.Equal(got, c.want) || changed != c.wantChanged {
			t.Errorf("%s: AddFencedInstance(%q, %q) = %q, %v; want %q, %v", c.name, c.names, c.add, got, changed, c.want, c.wantChanged)
		}
		if !slices.Equal(in, c.names) {
			t.Errorf("%s: the input was modified: %q", c.name, in)
		}
	}
}

func TestRemoveFencedInstance(t *testing.T) {
	cases := []struct {
		name        string
		names       []string
		remove      string
		want        []string
		wantChanged bool
		wantErr     string
	}{
		{"unfencing the only instance empties the list", []string{"db-2"}, "db-2", nil, true, ""},
		{"unfencing one keeps the others", []string{"db-1", "db-2"}, "db-1", []string{"db-2"}, true, ""},
		{"unfencing an instance that is not fenced changes nothing", []string{"db-1"}, "db-2", []string{"db-1"}, false, ""},
		{"unfencing all empties the list", []string{"db-1", "db-2"}, "*", nil, true, ""},
		{"unfencing all when nothing is fenced changes nothing", nil, "*", nil, false, ""},
		{"unfencing one while all are fenced is refused", []string{"*"}, "db-2", []string{"*"}, false, "every instance is fenced"},
	}
	for _, c := range cases {
		in := slices.Clone(c.names)
		got, changed, err := RemoveFencedInstance(in, c.remove)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
		} else if err != nil {
			t.Errorf("%s: unexpected error %v", c.name, err)
		}
		if !slices.Equal(got, c.want) || changed != c.wantChanged {
			t.Errorf("%s: RemoveFencedInstance(%q, %q) = %q, %v; want %q, %v", c.name, c.names, c.remove, got, changed, c.want, c.wantChanged)
		}
		if !slices.Equal(in, c.names) {
			t.Errorf("%s: the input was modified: %q", c.name, in)
		}
	}
}

func TestClusterFencedInstancesRequested(t *testing.T) {
	c := &Cluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{FencedInstancesAnnotation: `["db-2"]`}}}
	if got, err := c.FencedInstancesRequested(); err != nil || !slices.Equal(got, []string{"db-2"}) {
		t.Errorf("FencedInstancesRequested() = %q, %v", got, err)
	}
	if got, err := (&Cluster{}).FencedInstancesRequested(); err != nil || got != nil {
		t.Errorf("a Cluster without the annotation requests nothing; got %q, %v", got, err)
	}
	c.Annotations[FencedInstancesAnnotation] = "db-2"
	if _, err := c.FencedInstancesRequested(); err == nil {
		t.Error("a malformed annotation must be an error")
	}
}
