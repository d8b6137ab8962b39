package hostapi

import (
	"slices"
	"testing"
)

type walkNode struct {
	Name     string
	Kids     []*walkNode
	Any      any
	Skipped  *walkNode
	unexport *walkNode
}

func TestWalkTreeVisitsEveryNodeButSkippedAndUnexportedFields(t *testing.T) {
	root := &walkNode{Name: "root",
		Kids:     []*walkNode{{Name: "a"}, nil, {Name: "b", Any: &walkNode{Name: "c"}}},
		Skipped:  &walkNode{Name: "skipped"},
		unexport: &walkNode{Name: "hidden"},
	}
	var names []string
	WalkTree(root, func(n any) {
		if w, ok := n.(*walkNode); ok {
			names = append(names, w.Name)
		}
	}, "Skipped")
	slices.Sort(names)
	if want := []string{"a", "b", "c", "root"}; !slices.Equal(names, want) {
		t.Errorf("visited %v, want %v", names, want)
	}
}
