// Package bootstrap is `manager bootstrap`: the init container of every instance Pod copies the
// manager binary into a shared volume, so the MySQL container of any image can run it.
package bootstrap
