// Command imgpack packs a container image as a docker-archive tarball that `ctr images import`
// loads, or (-format oci) an OCI archive for a registry (ociarchive.go), without a container
// engine or a registry: one layer made of files and directory trees.
//
//	imgpack -ref cloudnative-mysql/operator:dev -out operator.tar \
//	    -add /path/to/manager:/manager -entrypoint /manager -user 65532
package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var adds, envs, excludes multi
	ref := flag.String("ref", "", "image reference, e.g. cloudnative-mysql/operator:dev")
	out := flag.String("out", "", "docker-archive tarball to write")
	entrypoint := flag.String("entrypoint", "", "entrypoint, space separated")
	user := flag.String("user", "", "user the image runs as")
	workdir := flag.String("workdir", "/", "working directory")
	format := flag.String("format", "docker", "docker (a docker-archive) or oci (an OCI archive that also carries a docker-archive's manifest.json)")
	flag.Var(&adds, "add", "SRC:DST: a file or a directory tree put at DST in the layer (repeatable)")
	flag.Var(&envs, "env", "KEY=VALUE (repeatable)")
	flag.Var(&excludes, "empty", "a directory of the image kept empty, e.g. tmp (repeatable)")
	flag.Parse()
	if *ref == "" || *out == "" || len(adds) == 0 {
		log.Fatal("usage: imgpack -ref REF -out FILE -add SRC:DST... [-entrypoint CMD] [-user U] [-env K=V]")
	}
	tag, err := name.NewTag(*ref)
	if err != nil {
		log.Fatal(err)
	}
	layerOpts := []tarball.LayerOption{tarball.WithCompressionLevel(gzip.BestSpeed)}
	if *format == "oci" {
		layerOpts = append(layerOpts, tarball.WithMediaType(types.OCILayer))
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeLayer(pw, adds, excludes)) }()
		return pr, nil
	}, layerOpts...)
	if err != nil {
		log.Fatal(err)
	}
	cfg := v1.Config{
		User:       *user,
		WorkingDir: *workdir,
		Env:        append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, envs...),
	}
	if *entrypoint != "" {
		cfg.Entrypoint = strings.Fields(*entrypoint)
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{Architecture: "amd64", OS: "linux", Config: cfg,
		RootFS: v1.RootFS{Type: "layers"}})
	if err != nil {
		log.Fatal(err)
	}
	if *format == "oci" {
		img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	img, err = mutate.AppendLayers(img, layer)
	if err != nil {
		log.Fatal(err)
	}
	tmp := *out + ".tmp"
	switch *format {
	case "docker":
		err = tarball.WriteToFile(tmp, tag, img)
	case "oci":
		err = writeOCIArchive(tmp, tag, img)
	default:
		err = fmt.Errorf("-format %q: want docker or oci", *format)
	}
	if err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(tmp, *out); err != nil {
		log.Fatal(err)
	}
	d, _ := img.Digest()
	fmt.Printf("%s %s\n", tag, d)
}

// writeLayer writes the layer's tar stream. A file that vanishes during the walk is left out (a
// root filesystem may be in use as scratch space); the directories in empty keep only themselves.
func writeLayer(w io.Writer, adds, empty []string) error {
	skip := map[string]bool{}
	for _, e := range empty {
		skip[strings.Trim(filepath.ToSlash(filepath.Clean(e)), "/")] = true
	}
	tw := tar.NewWriter(w)
	seen := map[string]bool{}
	for _, a := range adds {
		src, dst, ok := strings.Cut(a, ":")
		if !ok {
			return fmt.Errorf("-add %q: want SRC:DST", a)
		}
		dst = strings.TrimPrefix(filepath.Clean("/"+dst), "/")
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if emptied(skip, filepath.ToSlash(rel)) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			target := filepath.ToSlash(filepath.Join(dst, rel))
			if target == "." || target == "" {
				return nil
			}
			if seen[target] {
				return nil
			}
			seen[target] = true
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			link := ""
			if fi.Mode()&fs.ModeSymlink != 0 {
				if link, err = os.Readlink(p); err != nil {
					return err
				}
			}
			if !fi.Mode().IsRegular() && !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
				return nil // device nodes, sockets and fifos are the runtime's business
			}
			hdr, err := tar.FileInfoHeader(fi, link)
			if err != nil {
				return err
			}
			hdr.Name = target
			if fi.IsDir() {
				hdr.Name += "/"
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
			}
			// Both passes over the tree (digest, then write) must give the same bytes: no access
			// or change times, one modification time for all.
			hdr.Uname, hdr.Gname = "", ""
			hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = epoch, time.Time{}, time.Time{}
			hdr.Format = tar.FormatPAX
			if err := tw.WriteHeader(hdr); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if fi.Mode().IsRegular() {
				f, err := os.Open(p)
				if errors.Is(err, fs.ErrNotExist) {
					_, err = io.CopyN(tw, zeros{}, hdr.Size)
					return err
				}
				if err != nil {
					return err
				}
				// A file written to meanwhile is cut (or padded) to the size in its header.
				n, err := io.CopyN(tw, f, hdr.Size)
				f.Close()
				if errors.Is(err, io.EOF) {
					_, err = io.CopyN(tw, zeros{}, hdr.Size-n)
				}
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				return nil
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

// emptied tells whether rel lies inside one of the directories kept empty.
func emptied(skip map[string]bool, rel string) bool {
	for dir := range skip {
		if strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}

var epoch = time.Unix(0, 0)

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
