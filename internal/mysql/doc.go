// Package mysql holds the SQL operations the instance manager performs on its own mysqld: read
// its status, switch read-only, create the operator's accounts, point replication at a source,
// wait for the applier, configure semi-sync at runtime, and clone from a donor.
//
// Every operation is a method of the Operator interface, obtained from a Factory, so decision
// code is tested against a fake and these methods against real servers. Statements that carry a
// password are built by the driver's client-side interpolation (which quotes for the server's
// SQL mode); neither passwords nor statements appear in the errors returned.
package mysql
