package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"

	"github.com/minio/minio-go/v7"
)

// rawBackup runs `tar -cf - . | zstd -3` in dir and uploads its output with a plain minio-go
// multipart upload of unknown length.
func rawBackup(ctx context.Context, mc *minio.Client, bucket, key, dir string) (int64, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", "tar -C \"$1\" -cf - . | zstd -3 -q -c", "raw", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	info, err := mc.PutObject(ctx, bucket, key, struct{ io.Reader }{out}, -1,
		minio.PutObjectOptions{PartSize: 16 << 20, ContentType: "application/octet-stream"})
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("tar | zstd: %w", werr)
	}
	return info.Size, err
}

// rawRestore downloads key and pipes it into `zstd -d | tar -xf -` in dir.
func rawRestore(ctx context.Context, mc *minio.Client, bucket, key, dir string) error {
	obj, err := mc.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	cmd := exec.CommandContext(ctx, "sh", "-c", "zstd -d -q -c | tar -C \"$1\" -xf -", "raw", dir)
	cmd.Stdin = obj
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("zstd -d | tar -x: %w: %s", err, out)
	}
	return nil
}
