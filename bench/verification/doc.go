// Command verification measures a restore verification (internal/verify) against a plain restore
// of the same backup, in one run: a real mysqld grown to -mb of table data, a clone backup of it
// in a real S3 server (versitygw), then restores and verifications one after the other. It prints
// each run's times and the ratios the verification is held to: (verification minus its CHECK
// TABLE phase) over the plain restore, target at most 1.3, with the CHECK TABLE time reported
// separately.
//
//	go run ./bench/verification -mb 1024 -runs 3
package main
