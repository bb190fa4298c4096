package plugin

import (
	"io"
	"strings"
	"unicode/utf8"
)

// cell is one cell of a table: its text and the colour it is painted in on a terminal ("": none).
type cell struct{ text, color string }

func plain(s string) cell { return cell{text: s} }

// table aligns its columns on the cells' text, then paints the cells: the colour codes never
// count in the widths, so a coloured table stays aligned.
type table struct{ rows [][]cell }

func (t *table) row(cells ...cell) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer, paint func(color, text string) string) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			b.WriteString(paint(c.color, c.text))
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+2))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
