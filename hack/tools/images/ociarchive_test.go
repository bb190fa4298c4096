package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// TestOCIArchive: the archive is an OCI image layout whose index names the image by
// org.opencontainers.image.ref.name and holds it whole (every blob present and matching its
// digest), and a docker-archive reader finds the same image through manifest.json.
func TestOCIArchive(t *testing.T) {
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("cloudnative-mysql/operator:dev")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "operator.tar")
	if err := writeOCIArchive(out, tag, img); err != nil {
		t.Fatal(err)
	}
	extracted := filepath.Join(dir, "x")
	untar(t, out, extracted)

	idx, err := layout.ImageIndexFromPath(extracted)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != tag.String() {
		t.Fatalf("index %+v, want one image named %s", m.Manifests, tag)
	}
	got, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(got); err != nil {
		t.Errorf("the layout's image: %v", err)
	}
	want, _ := img.Digest()
	if d, _ := got.Digest(); d != want {
		t.Errorf("the layout holds %s, want %s", d, want)
	}

	var docker []struct{ RepoTags []string }
	b, err := os.ReadFile(filepath.Join(extracted, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &docker); err != nil || len(docker) != 1 || len(docker[0].RepoTags) != 1 || docker[0].RepoTags[0] != tag.String() {
		t.Fatalf("manifest.json %s (%v)", b, err)
	}
	viaDocker, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(viaDocker, validate.Fast); err != nil {
		t.Errorf("the image through manifest.json: %v", err)
	}
	wantLayers, _ := img.Layers()
	gotLayers, _ := viaDocker.Layers()
	if len(gotLayers) != len(wantLayers) {
		t.Errorf("%d layers through manifest.json, want %d", len(gotLayers), len(wantLayers))
	}
}

func untar(t *testing.T, file, dst string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dst, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
