package main

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// datasource is the Prometheus data source the dashboard's variable selects.
var datasource = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// sel is the selector of a metric limited to the selected namespaces and clusters: every series
// of the operator and of the instances carries both labels.
func sel(metric string) string {
	return fmt.Sprintf(`%s{namespace=~"$namespace", cluster=~"$cluster"}`, metric)
}

// target is one query of a panel.
type target struct {
	expr, legend string
}

func q(expr, legend string) target { return target{expr: expr, legend: legend} }

func queries(instant bool, ts []target) []cog.Builder[variants.Dataquery] {
	out := make([]cog.Builder[variants.Dataquery], 0, len(ts))
	for i, t := range ts {
		b := prometheus.NewDataqueryBuilder().
			Datasource(datasource).
			RefId(string(rune('A' + i))).
			Expr(t.expr).
			LegendFormat(t.legend)
		if instant {
			b = b.Instant()
		} else {
			b = b.Range()
		}
		out = append(out, b)
	}
	return out
}

// statPanel shows the current value of each query (instant queries).
func statPanel(title, desc, unit string, ts ...target) *stat.PanelBuilder {
	return stat.NewPanelBuilder().
		Title(title).
		Description(desc).
		Datasource(datasource).
		Unit(unit).
		Span(4).
		Height(4).
		GraphMode(common.BigValueGraphModeNone).
		ColorMode(common.BigValueColorModeValue).
		Orientation(common.VizOrientationAuto).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		Targets(queries(true, ts))
}

// seriesPanel draws each query over the dashboard's time range (range queries).
func seriesPanel(title, desc, unit string, width uint32, ts ...target) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Title(title).
		Description(desc).
		Datasource(datasource).
		Unit(unit).
		Span(width).
		Height(8).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true)).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending)).
		Targets(queries(false, ts))
}

// steps are thresholds from a base colour: each value at or above which the colour changes.
func steps(base string, at ...any) *dashboard.ThresholdsConfigBuilder {
	s := []dashboard.Threshold{{Color: base}}
	for i := 0; i+1 < len(at); i += 2 {
		s = append(s, dashboard.Threshold{Value: cog.ToPtr(at[i].(float64)), Color: at[i+1].(string)})
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(s)
}

// boolean maps 1 and 0 to words and colours, for a 1/0 gauge.
func boolean(one, oneColor, zero, zeroColor string) []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
		Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{
			"1": {Text: cog.ToPtr(one), Color: cog.ToPtr(oneColor), Index: cog.ToPtr(int32(0))},
			"0": {Text: cog.ToPtr(zero), Color: cog.ToPtr(zeroColor), Index: cog.ToPtr(int32(1))},
		},
	}}}
}
