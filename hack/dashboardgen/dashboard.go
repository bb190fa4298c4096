package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// uid is the dashboard's identity across Grafana instances: an import replaces the earlier one.
const uid = "cloudnative-mysql"

// row is a titled group of panels.
type row struct {
	title  string
	panels []cog.Builder[dashboard.Panel]
}

func rows() []row {
	return []row{overview(), replication(), backups(), archive(), failovers(), mysqlBasics()}
}

func build() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("cloudnative-mysql").
		Uid(uid).
		Description("MySQL clusters of the cloudnative-mysql operator: instances, replication and semi-sync, backups and their verification, the binlog archive, failovers.").
		Tags([]string{"cloudnative-mysql", "mysql"}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Refresh("30s").
		Time("now-6h", "now").
		Timezone(common.TimeZoneBrowser).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").
			Label("Data source").
			Type("prometheus")).
		WithVariable(labelValues("namespace", "Namespace", `label_values(cnm_cluster_instances, namespace)`)).
		WithVariable(labelValues("cluster", "Cluster", `label_values(cnm_cluster_instances{namespace=~"$namespace"}, cluster)`))
	for _, r := range rows() {
		b = b.WithRow(dashboard.NewRowBuilder(r.title))
		for _, p := range r.panels {
			b = b.WithPanel(p)
		}
	}
	d, err := b.Build()
	if err != nil {
		return d, err
	}
	numberPanels(d.Panels)
	return d, nil
}

// numberPanels gives every row and panel its id, in the order they appear, so that an import
// does not depend on Grafana numbering them.
func numberPanels(panels []dashboard.PanelOrRowPanel) {
	for i := range panels {
		id := uint32(i + 1)
		if p := panels[i].Panel; p != nil {
			p.Id = &id
		}
		if r := panels[i].RowPanel; r != nil {
			r.Id = id
		}
	}
}

// labelValues is a variable listing the values of a label, several selectable, "All" included.
func labelValues(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(datasource).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(".*")
}
