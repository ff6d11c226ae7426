package readme

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// block is one ```go block of README.md and the line its code starts on.
type block struct {
	code string
	line int
}

// readmeBlocks returns README.md's ```go blocks, in order.
func readmeBlocks(t *testing.T, path string) []block {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []block
	var cur *block
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &block{line: n + 1}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("README.md: the go block from line %d is not closed", cur.line)
	}
	return blocks
}

// imports are the packages a block may use: the wrapper imports them all and uses each
// once, so that a block need not use every one.
var imports = []struct{ path, use string }{
	{"fmt", "fmt.Sprint"},
	{"log", "log.Fatal"},
	{"github.com/kvsimd/kvsimd/bf16", "bf16.FromFloat32"},
	{"github.com/kvsimd/kvsimd/fp16", "fp16.FromFloat32"},
	{"github.com/kvsimd/kvsimd/kernels", "kernels.Variants"},
	{"github.com/kvsimd/kvsimd/q8", "q8.Quantize"},
	{"github.com/kvsimd/kvsimd/snapkv", "snapkv.Select[fp16.Float16]"},
}

// wrap makes a block the body of a function in a file of package main. A snippet may
// declare a result it only shows (sel, err := …): each name the block declares at its
// top level is used once after it, so only what the code itself gets wrong fails. A
// //line directive makes the compiler's errors name README.md's lines.
func wrap(b block) (string, error) {
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, im := range imports {
		fmt.Fprintf(&src, "\t%q\n", im.path)
	}
	src.WriteString(")\n\nvar (\n")
	for _, im := range imports {
		fmt.Fprintf(&src, "\t_ = %s\n", im.use)
	}
	src.WriteString(")\n\nfunc block() {\n")
	fmt.Fprintf(&src, "//line README.md:%d\n%s", b.line, b.code)
	body := src.String()

	f, err := parser.ParseFile(token.NewFileSet(), "README.md", body+"}\n", parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	var declared []string
	for _, st := range f.Decls[len(f.Decls)-1].(*ast.FuncDecl).Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					declared = append(declared, e.(*ast.Ident).Name)
				}
			}
		case *ast.DeclStmt:
			for _, spec := range st.Decl.(*ast.GenDecl).Specs {
				if vs, ok := spec.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						declared = append(declared, n.Name)
					}
				}
			}
		}
	}
	var uses strings.Builder
	for _, n := range declared {
		if n != "_" {
			fmt.Fprintf(&uses, "\t_ = %s\n", n)
		}
	}
	return body + uses.String() + "}\n", nil
}

// TestReadmeBlocksBuild builds every ```go block of README.md, each as the body of a
// function in a package main of its own beside testdata/free.go, with the go command
// and an overlay (nothing is written into the tree). A block that does not compile
// fails the test with the compiler's message at its README.md line.
func TestReadmeBlocksBuild(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the README's blocks with:", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t, filepath.Join(root, "README.md"))
	if len(blocks) < 4 { // the variants, Select, the engine loop and the formats
		t.Fatalf("README.md has %d go blocks, want at least 4: is the extraction broken?", len(blocks))
	}
	free, err := filepath.Abs(filepath.Join("testdata", "free.go"))
	if err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	for i, b := range blocks {
		src, err := wrap(b)
		if err != nil {
			t.Errorf("the go block from README.md:%d does not parse: %v", b.line, err)
			continue
		}
		file := filepath.Join(tmp, fmt.Sprintf("block%d.go", i))
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, "internal", "readme", fmt.Sprintf("block%d", i))
		overlay[filepath.Join(dir, "block.go")] = file
		overlay[filepath.Join(dir, "free.go")] = free
		pkgs = append(pkgs, "./internal/readme/"+filepath.Base(dir))
	}
	if t.Failed() {
		return
	}
	js, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, js, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, append([]string{"build", "-overlay", overlayFile, "-o", tmp + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("README.md's go blocks do not build (%v):\n%s", err, out)
	}
}
