package admission_test

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

var (
	timeType      = reflect.TypeOf(metav1.Time{})
	microTimeType = reflect.TypeOf(metav1.MicroTime{})
)

// timeFields returns the schema path (as schemaProblems writes it) of every metav1.Time and
// metav1.MicroTime under t, with the pattern its type decodes.
func timeFields(path string, t reflect.Type) map[string]string {
	fields := map[string]string{}
	var walk func(path string, t reflect.Type)
	walk = func(path string, t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer:
			walk(path, t.Elem())
		case reflect.Slice:
			walk(path+"[]", t.Elem())
		case reflect.Map:
			walk(path+"[*]", t.Elem())
		case reflect.Struct:
			switch t {
			case timeType:
				fields[path] = v1.TimePattern
				return
			case microTimeType:
				fields[path] = v1.MicroTimePattern
				return
			}
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if !f.IsExported() || name == "-" || name == "" {
					continue
				}
				walk(path+"."+name, f.Type)
			}
		}
	}
	walk(path, t)
	return fields
}

// schemaAt returns the node at path ("" for the root, then .name, [] and [*] steps).
func schemaAt(root map[string]any, path string) map[string]any {
	n := root
	for path != "" && n != nil {
		switch {
		case strings.HasPrefix(path, "[*]"):
			n, _ = n["additionalProperties"].(map[string]any)
			path = path[3:]
		case strings.HasPrefix(path, "[]"):
			n, _ = n["items"].(map[string]any)
			path = path[2:]
		default:
			name := strings.TrimPrefix(path, ".")
			end := strings.IndexAny(name, ".[")
			if end < 0 {
				end = len(name)
			}
			props, _ := n["properties"].(map[string]any)
			n, _ = props[name[:end]].(map[string]any)
			path = name[end:]
		}
	}
	return n
}

// TestTimeFieldsCarryThePatternOfTheirGoType finds every metav1.Time and metav1.MicroTime in the
// spec and status of each kind by reflection and checks the generated schema gives it the pattern
// its type decodes: a MicroTime with TimePattern would admit a time without fraction again.
func TestTimeFieldsCarryThePatternOfTheirGoType(t *testing.T) {
	schemas := generatedCRDSchemas(t)
	for _, kind := range []struct {
		schema string
		object any
	}{
		{"clusters v1alpha1", v1.Cluster{}},
		{"backups v1alpha1", v1.Backup{}},
		{"scheduledbackups v1alpha1", v1.ScheduledBackup{}},
	} {
		root := schemas[kind.schema]
		typ := reflect.TypeOf(kind.object)
		for _, part := range []string{"Spec", "Status"} {
			f, _ := typ.FieldByName(part)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields := timeFields("."+name, f.Type)
			if part == "Status" && len(fields) == 0 {
				t.Errorf("%s: no time field found in the status: the reflection walk is broken", kind.schema)
			}
			for path, want := range fields {
				node := schemaAt(root, path)
				switch {
				case node == nil:
					t.Errorf("%s%s: a %s field has no schema node", kind.schema, path, patternName(want))
				case node["pattern"] != want:
					t.Errorf("%s%s: pattern %v, want %s", kind.schema, path, node["pattern"], patternName(want))
				}
			}
		}
	}
}

func patternName(p string) string {
	if p == v1.MicroTimePattern {
		return "MicroTimePattern"
	}
	return "TimePattern"
}
