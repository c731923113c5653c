package yamldocs

import "testing"

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    []string
		wantErr bool
	}{
		{"two documents", "kind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: b}\n", []string{"A/a", "B/b"}, false},
		{"empty documents are skipped", "---\n# comment\n---\nkind: A\nmetadata: {name: a}\n---\n", []string{"A/a"}, false},
		{"JSON", `{"kind": "A", "metadata": {"name": "a"}}`, []string{"A/a"}, false},
		{"broken YAML names the document", "kind: A\n---\nkind: [\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Decode([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
