package v1alpha1

// What the schema admits, the operator's informers must decode: a single stored object that does
// not decode into these types makes every list of its kind fail, and the operator then reconciles
// no object of that kind in any namespace. The API server's own checks are looser than the Go
// decoders in three places, so every field of these kinds carries a bound of its own (the test
// TestGeneratedCRDsAdmitOnlyWhatTheOperatorDecodes in test/admission walks the generated CRDs for
// them):
//
//   - Integers: a number beyond the field's Go type does not decode. Every integer has a
//     Maximum: 2147483647 for an int32, 9007199254740991 (2^53-1) for an int64. The schema's
//     bounds are float64, and 9223372036854775807 would become 2^63, which the API server
//     refuses as an int64 bound and then rejects every value of the field; 2^53-1 is the largest
//     integer a float64 holds exactly, and no count, size or generation here comes near it.
//   - Times: format date-time admits a lower-case t or z, and any number of fractional digits,
//     while metav1.Time decodes only RFC 3339 with an upper-case T and Z, and metav1.MicroTime
//     only with exactly six fractional digits. Every time carries TimePattern or
//     MicroTimePattern (the markers repeat them literally; a test checks they are these).
//   - Quantities: the quantity pattern admits strings such as 1e1.5 that resource.ParseQuantity
//     refuses. Every quantity, and every value of a map of quantities, is checked with CEL
//     isQuantity; a map has a MaxProperties so that the rule over its values fits the API
//     server's CEL cost budget.

// TimePattern is the schema pattern of a metav1.Time: RFC 3339 as time.Parse(time.RFC3339)
// decodes it, upper-case T and Z, optional fractional seconds, Z or a ±hh:mm offset. Day-of-month
// overflow (February 30) is left to format date-time, which refuses it.
const TimePattern = `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`

// MicroTimePattern is the schema pattern of a metav1.MicroTime: as TimePattern, with exactly six
// fractional digits, as metav1.MicroTime writes and decodes it (2006-01-02T15:04:05.000000Z07:00).
const MicroTimePattern = `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{6}(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
