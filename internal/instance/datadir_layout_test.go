package instance

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// tree lists the regular files and directories under dir, relative to it, with their content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if name[len(name)-1] == '/' {
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPrepareDataDir(t *testing.T) {
	legacy := map[string]string{"mysql.ibd": "dd", "auto.cnf": "uuid", "binlog.000001": "b", "app/": "", "app/t.ibd": "t"}
	for _, tc := range []struct {
		rule   string
		before map[string]string
		layout DataDirLayout
		after  map[string]string
	}{
		{"an empty volume gets an empty data subdirectory", map[string]string{},
			LayoutSubdirectory, map[string]string{"data/": ""}},
		{"lost+found of a fresh ext4 volume stays at the root, beside the data subdirectory",
			map[string]string{"lost+found/": ""}, LayoutSubdirectory, map[string]string{"lost+found/": "", "data/": ""}},
		{"a data subdirectory is used as it is",
			map[string]string{"lost+found/": "", "data/": "", "data/mysql.ibd": "dd"}, LayoutSubdirectory,
			map[string]string{"lost+found/": "", "data/": "", "data/mysql.ibd": "dd"}},
		{"a data directory at the volume's root is moved into the subdirectory, every file kept", legacy,
			LayoutMigrated, map[string]string{"data/": "", "data/mysql.ibd": "dd", "data/auto.cnf": "uuid",
				"data/binlog.000001": "b", "data/app/": "", "data/app/t.ibd": "t"}},
		{"a schema named data at the root is moved with the others, not mistaken for the subdirectory",
			map[string]string{"mysql.ibd": "dd", "data/": "", "data/t.ibd": "schema data"}, LayoutMigrated,
			map[string]string{"data/": "", "data/mysql.ibd": "dd", "data/data/": "", "data/data/t.ibd": "schema data"}},
		{"lost+found is not moved into the data directory",
			map[string]string{"mysql.ibd": "dd", "lost+found/": ""}, LayoutMigrated,
			map[string]string{"lost+found/": "", "data/": "", "data/mysql.ibd": "dd"}},
		{"a move interrupted after some entries is finished",
			map[string]string{migratingDir + "/": "", migratingDir + "/mysql.ibd": "dd", "auto.cnf": "uuid", "app/": "", "app/t.ibd": "t"},
			LayoutMigrated, map[string]string{"data/": "", "data/mysql.ibd": "dd", "data/auto.cnf": "uuid", "data/app/": "", "data/app/t.ibd": "t"}},
		{"a move interrupted before its last rename is finished",
			map[string]string{migratingDir + "/": "", migratingDir + "/mysql.ibd": "dd", "lost+found/": ""},
			LayoutMigrated, map[string]string{"lost+found/": "", "data/": "", "data/mysql.ibd": "dd"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			volume := t.TempDir()
			writeTree(t, volume, tc.before)
			layout, err := PrepareDataDir(volume, filepath.Join(volume, "data"))
			if err != nil {
				t.Fatal(err)
			}
			got := tree(t, volume)
			if layout != tc.layout || !maps.Equal(got, tc.after) {
				t.Errorf("layout %s, volume %v; want %s, %v", layout, keys(got), tc.layout, keys(tc.after))
			}
			// A second start finds the subdirectory and changes nothing.
			if layout, err := PrepareDataDir(volume, filepath.Join(volume, "data")); err != nil || layout != LayoutSubdirectory ||
				!maps.Equal(tree(t, volume), tc.after) {
				t.Errorf("second start: layout %s, err %v, volume %v", layout, err, keys(tree(t, volume)))
			}
		})
	}
}

func TestPrepareDataDirRefusesADataDirOutsideTheVolume(t *testing.T) {
	volume := t.TempDir()
	for _, dir := range []string{volume, filepath.Join(volume, "a", "data"), filepath.Join(t.TempDir(), "data")} {
		if _, err := PrepareDataDir(volume, dir); err == nil {
			t.Errorf("data directory %s of volume %s accepted", dir, volume)
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestRunConfigWantsTheDataDirDirectlyBelowItsVolume(t *testing.T) {
	for _, tc := range []struct {
		rule            string
		volume, dataDir string
		ok              bool
	}{
		{"no volume: the data directory is used as it is", "", "/var/lib/mysql", true},
		{"a subdirectory of the volume", "/var/lib/mysql", "/var/lib/mysql/data", true},
		{"the volume itself is refused", "/var/lib/mysql", "/var/lib/mysql", false},
		{"a deeper directory is refused", "/var/lib/mysql", "/var/lib/mysql/a/data", false},
		{"a directory elsewhere is refused", "/var/lib/mysql", "/data", false},
	} {
		c := &RunConfig{Instance: "db-1", Namespace: "ns", Cluster: "db", MysqldCommand: []string{"mysqld"},
			DataDir: tc.dataDir, DataVolume: tc.volume, RunDir: "/run/m", ServerTLSDir: "/tls/s", ClientTLSDir: "/tls/c"}
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v", tc.rule, err)
		}
	}
}
