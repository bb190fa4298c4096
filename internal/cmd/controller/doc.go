// Package controller is `manager controller`: the operator process.
package controller
