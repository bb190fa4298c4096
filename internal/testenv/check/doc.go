// Package check holds the small assertions every test layer shares: Eventually, the one way a
// test waits for something to become true, and Must/Value, the one way it stops on an error it
// does not expect.
package check
