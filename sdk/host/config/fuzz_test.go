package config

import (
	"strings"
	"testing"
)

// FuzzParse: no config file makes Parse panic, and every error it reports
// names the file.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"[defaults]\nsymposium-recommendations = false\n",
		"[[package-manager]]\nname = \"p\"\ncommand = \"x\"\nargs = [\"-v\"]\nenv = { A = \"b\" }\n",
		"[[registry]]\nname = \"r\"\npath = \"mine\"\n\n[[plugin-source]]\nname = \"s\"\ngit = \"https://x\"\n",
		"[plugins]\ndisable = [\"a\", { pm = \"cargo\", name = \"b\" }]\nuse = [{ name = \"c\", workspace = \"/w\" }]\n",
		"a = 1\n[plugins\n",
		"registry = \"x\"\n",
		"[hooks]\ntimeout = 99999999999999999999\n",
		"[registy]\n[defaults]\nfoo = 1\n[[package-manager]]\nname = \"p\"\nsource = \"go\"\nmodul = \"x\"\n[package-manager.env]\nA = 1\n",
		"auto-enable = [{pm = \"crago\", name = \"x\"}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.toml", data, "/d")
		if c == nil {
			t.Fatal("Parse returned no config")
		}
		if err == nil {
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(line, "fuzz.toml") {
				t.Fatalf("error line %q does not name the file (input %q)", line, data)
			}
		}
	})
}
