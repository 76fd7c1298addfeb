// go_fields: prints, for every struct in the given Kubernetes API source trees, each field's JSON facts:
// proto-package<TAB>Type<TAB>GoField<TAB>json<TAB>omitempty<TAB>inline<TAB>pointer<TAB>goType
// and for named slice types: proto-package<TAB>Type<TAB>SLICE
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

func main() {
	for _, root := range os.Args[1:] { // root=dir:importprefix
		parts := strings.SplitN(root, ":", 2)
		filepath.Walk(parts[0], func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "/testing/") {
				return nil
			}
			rel, _ := filepath.Rel(parts[0], filepath.Dir(path))
			pkg := strings.ReplaceAll(parts[1]+"/"+rel, "/", ".")
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return nil
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.TYPE {
					continue
				}
				for _, s := range g.Specs {
					ts := s.(*ast.TypeSpec)
					switch t := ts.Type.(type) {
					case *ast.ArrayType:
						if t.Len == nil {
							fmt.Printf("%s\t%s\tSLICE\n", pkg, ts.Name.Name)
						}
					case *ast.StructType:
						for _, fld := range t.Fields.List {
							tag := ""
							if fld.Tag != nil {
								tag = reflect.StructTag(strings.Trim(fld.Tag.Value, "`")).Get("json")
							}
							if tag == "-" {
								continue
							}
							opts := strings.Split(tag, ",")
							name := opts[0]
							omit, inline := false, false
							for _, o := range opts[1:] {
								omit = omit || o == "omitempty" || o == "omitzero"
								inline = inline || o == "inline"
							}
							_, ptr := fld.Type.(*ast.StarExpr)
							typ := fmt.Sprint(fld.Type)
							if len(fld.Names) == 0 {
								inline = inline || name == ""
								goName := strings.TrimPrefix(exprName(fld.Type), "*")
								fmt.Printf("%s\t%s\t%s\t%s\t%v\t%v\t%v\t%s\n", pkg, ts.Name.Name, goName, name, omit, inline, ptr, typ)
							}
							for _, n := range fld.Names {
								fmt.Printf("%s\t%s\t%s\t%s\t%v\t%v\t%v\t%s\n", pkg, ts.Name.Name, n.Name, name, omit, inline, ptr, typ)
							}
						}
					}
				}
			}
			return nil
		})
	}
}

func exprName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return exprName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return fmt.Sprint(e)
}
