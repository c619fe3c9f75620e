// SPDX-License-Identifier: MIT
//! Finds libgpuar and tells cargo how to link it.
//!
//! GPUAR_LIB_DIR: the directory holding libgpuar.a and/or libgpuar.so
//! (default: the repository's own build/lib when the crate sits in the
//! gpuar tree, else the system's library path).
//! GPUAR_LINK: "static" (libgpuar.a; the default when the directory has
//! it) or "dylib" (libgpuar.so; the tests and examples of this crate get
//! an rpath to it).
//! GPUAR_INCLUDE_DIRS: the C headers the layout test compiles against,
//! ':'-separated (default: the tree's include, include/uapi and
//! backends/include).
use std::env;
use std::path::{Path, PathBuf};

fn main() {
    for var in ["GPUAR_LIB_DIR", "GPUAR_LINK", "GPUAR_INCLUDE_DIRS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let tree = manifest.join("../..");
    let in_tree = tree.join("include/gpuar/gpuar.h").is_file();

    let lib_dir = match env::var_os("GPUAR_LIB_DIR") {
        Some(dir) => Some(PathBuf::from(dir)),
        None if in_tree => Some(tree.join("build/lib")),
        None => None,
    };
    let link = env::var("GPUAR_LINK").ok();
    let link = match link.as_deref() {
        Some("static") => "static",
        Some("dylib") => "dylib",
        Some(other) => panic!("GPUAR_LINK={other}: expected static or dylib"),
        None => match &lib_dir {
            Some(dir) if dir.join("libgpuar.a").is_file() => "static",
            _ => "dylib",
        },
    };
    if let Some(dir) = &lib_dir {
        let file = dir.join(if link == "static" { "libgpuar.a" } else { "libgpuar.so" });
        if !file.exists() {
            panic!(
                "{} missing: build libgpuar first (`make lib` in the gpuar tree) \
                 or point GPUAR_LIB_DIR at a directory that has it",
                file.display()
            );
        }
        println!("cargo:rerun-if-changed={}", file.display());
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        println!("cargo:rustc-link-search=native={}", dir.display());
        if link == "dylib" {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        }
    }
    if link == "static" {
        println!("cargo:rustc-link-lib=static=gpuar");
        // What the archive's objects need (the shared library records it).
        for dep in ["uring", "drm", "dl", "pthread"] {
            println!("cargo:rustc-link-lib=dylib={dep}");
        }
    } else {
        println!("cargo:rustc-link-lib=dylib=gpuar");
    }

    let includes: Vec<PathBuf> = match env::var("GPUAR_INCLUDE_DIRS") {
        Ok(dirs) => env::split_paths(&dirs).collect(),
        Err(_) if in_tree => ["include", "include/uapi", "backends/include"]
            .iter()
            .map(|d| canon(&tree.join(d)))
            .collect(),
        Err(_) => Vec::new(),
    };
    let joined = env::join_paths(&includes).expect("include dirs without ':'");
    println!("cargo:rustc-env=GPUAR_LAYOUT_INCLUDE_DIRS={}", joined.to_string_lossy());
}

fn canon(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
