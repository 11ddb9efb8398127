/* The LLVM plugin of analysis (build/libhubprof_llvm.so, linked to LLVM 15, the version PoCL 3.1 runs):
 * compiles a kernel's IR (PoCL's parallel.bc) again after giving each function that has debug locations but
 * no subprogram (PoCL's work-group functions) a subprogram of its own, so that the object has line rows for
 * the code that ran. Loaded by code_lines.c with dlopen, in a child process; prefix hl_. */
/* SPDX-License-Identifier: MIT */
#include "llvm_regen.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hl_map { /* loop metadata already rewritten for a function: old node -> new node */
  LLVMMetadataRef from[64], to[64];
  int n;
} hl_map;

static void say(char *why, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, n, fmt, ap);
  va_end(ap);
}

static void on_diagnostic(LLVMDiagnosticInfoRef d, void *ctx) {
  char *why = ctx; /* the first error (at least HL_WHY bytes) */
  if (LLVMGetDiagInfoSeverity(d) != LLVMDSError || why[0]) return;
  char *m = LLVMGetDiagInfoDescription(d);
  snprintf(why, HL_WHY, "%s", m ? m : "an LLVM error");
  LLVMDisposeMessage(m);
}

static int is_debug_call(LLVMValueRef i) {
  if (!LLVMIsACallInst(i)) return 0;
  LLVMValueRef f = LLVMGetCalledValue(i);
  size_t len = 0;
  const char *name = f ? LLVMGetValueName2(f, &len) : NULL;
  return name && len > 9 && !strncmp(name, "llvm.dbg.", 9);
}

/* A location on line:column of the same line, scoped to sp (no inlining: the function's own lines). */
static LLVMMetadataRef rescope(LLVMContextRef c, LLVMMetadataRef loc, LLVMMetadataRef sp) {
  return LLVMDIBuilderCreateDebugLocation(c, LLVMDILocationGetLine(loc), LLVMDILocationGetColumn(loc), sp,
                                          NULL);
}

/* The loop metadata node v with its locations scoped to sp (a new, self-referencing node). */
static LLVMMetadataRef rescope_loop(LLVMContextRef c, LLVMValueRef v, LLVMMetadataRef sp, hl_map *m) {
  LLVMMetadataRef old = LLVMValueAsMetadata(v);
  for (int i = 0; i < m->n; i++)
    if (m->from[i] == old) return m->to[i];
  unsigned n = LLVMGetMDNodeNumOperands(v);
  if (!n || n > 64 || m->n == 64) return NULL;
  LLVMValueRef ops[64];
  LLVMMetadataRef mds[64];
  LLVMGetMDNodeOperands(v, ops);
  LLVMMetadataRef self = LLVMTemporaryMDNode(c, NULL, 0);
  mds[0] = self;
  for (unsigned i = 1; i < n; i++) {
    if (!ops[i]) return NULL;
    mds[i] = LLVMValueAsMetadata(ops[i]);
    if (LLVMGetMetadataKind(mds[i]) == LLVMDILocationMetadataKind) mds[i] = rescope(c, mds[i], sp);
  }
  LLVMMetadataRef node = LLVMMDNodeInContext2(c, mds, n);
  LLVMMetadataReplaceAllUsesWith(self, node); /* the self reference makes the node distinct */
  m->from[m->n] = old;
  m->to[m->n++] = node;
  return node;
}

/* The subprogram of a function that has none, or NULL when it has no located instruction. */
static LLVMMetadataRef new_subprogram(LLVMDIBuilderRef b, LLVMValueRef f, LLVMMetadataRef *cu_file) {
  LLVMMetadataRef first = NULL;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb && !first; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i && !first; i = LLVMGetNextInstruction(i))
      if (!is_debug_call(i)) first = LLVMInstructionGetDebugLoc(i);
  if (!first) return NULL;
  LLVMMetadataRef file = LLVMDIScopeGetFile(LLVMDILocationGetScope(first));
  if (!file) return NULL;
  if (!*cu_file) { /* one compile unit of hubprof's for the new subprograms (a definition needs one) */
    unsigned fl = 0, dl = 0;
    const char *fn = LLVMDIFileGetFilename(file, &fl), *dir = LLVMDIFileGetDirectory(file, &dl);
    LLVMMetadataRef f2 = LLVMDIBuilderCreateFile(b, fn, fl, dir, dl);
    LLVMDIBuilderCreateCompileUnit(b, LLVMDWARFSourceLanguageC99, f2, "hubprof", 7, 1, "", 0, 0, "", 0,
                                   LLVMDWARFEmissionFull, 0, 0, 0, "", 0, "", 0);
    *cu_file = f2;
  }
  size_t len = 0;
  const char *name = LLVMGetValueName2(f, &len);
  LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(b, *cu_file, NULL, 0, LLVMDIFlagZero);
  unsigned line = LLVMDILocationGetLine(first);
  return LLVMDIBuilderCreateFunction(b, *cu_file, name, len, name, len, *cu_file, line, ty, 0, 1, line,
                                     LLVMDIFlagZero, 1);
}

/* Give f the subprogram sp and scope its locations (and its loops' locations) to it; drop its llvm.dbg.*
 * calls (they name the variables of another function). */
static void adopt(LLVMContextRef c, LLVMValueRef f, LLVMMetadataRef sp) {
  unsigned loop = LLVMGetMDKindIDInContext(c, "llvm.loop", 9);
  hl_map m = {.n = 0};
  LLVMSetSubprogram(f, sp);
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef i = LLVMGetFirstInstruction(bb);
    while (i) {
      LLVMValueRef next = LLVMGetNextInstruction(i);
      if (is_debug_call(i)) {
        LLVMInstructionEraseFromParent(i);
        i = next;
        continue;
      }
      LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(i);
      if (loc) LLVMInstructionSetDebugLoc(i, rescope(c, loc, sp));
      LLVMValueRef lm = LLVMGetMetadata(i, loop);
      if (lm) {
        LLVMMetadataRef nl = rescope_loop(c, lm, sp, &m);
        LLVMSetMetadata(i, loop, nl ? LLVMMetadataAsValue(c, nl) : NULL);
      }
      i = next;
    }
  }
}

/* The string attribute `key` of the first defined function having it, or "" (PoCL sets target-cpu and
 * target-features on every function). */
static const char *fn_attr(LLVMModuleRef mod, const char *key) {
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    LLVMAttributeRef a =
        LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, key, (unsigned)strlen(key));
    unsigned len = 0;
    const char *v = a ? LLVMGetStringAttributeValue(a, &len) : NULL;
    if (v) return v;
  }
  return "";
}

static int emit(LLVMModuleRef mod, void **obj, size_t *objn, char *why) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  const char *triple = LLVMGetTarget(mod);
  char *def = NULL;
  if (!triple || !*triple) triple = def = LLVMGetDefaultTargetTriple();
  LLVMTargetRef t;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(triple, &t, &err)) {
    say(why, HL_WHY, "no LLVM target for %s: %s", triple, err ? err : "?");
    LLVMDisposeMessage(err);
    LLVMDisposeMessage(def);
    return -1;
  }
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(t, triple, fn_attr(mod, "target-cpu"), fn_attr(mod, "target-features"),
                              LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelDefault);
  LLVMDisposeMessage(def);
  if (!tm) {
    say(why, HL_WHY, "no LLVM target machine for this module");
    return -1;
  }
  LLVMMemoryBufferRef out = NULL;
  int rc = 0;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &err, &out)) {
    say(why, HL_WHY, "code generation failed: %s", err ? err : "?");
    LLVMDisposeMessage(err);
    rc = -1;
  } else {
    *objn = LLVMGetBufferSize(out);
    *obj = malloc(*objn ? *objn : 1);
    if (*obj)
      memcpy(*obj, LLVMGetBufferStart(out), *objn);
    else
      say(why, HL_WHY, "out of memory"), rc = -1;
    LLVMDisposeMemoryBuffer(out);
  }
  LLVMDisposeTargetMachine(tm);
  return rc;
}

HL_EXPORT int hl_regenerate(const void *bc, size_t n, void **obj, size_t *objn, char *why) {
  *obj = NULL;
  *objn = 0;
  why[0] = 0;
  LLVMContextRef c = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(c, on_diagnostic, why);
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(bc, n, "parallel.bc");
  LLVMModuleRef mod = NULL;
  int rc = -1;
  if (LLVMParseBitcodeInContext2(c, buf, &mod) || !mod) {
    char m[HL_WHY];
    snprintf(m, sizeof m, "%s", why);
    say(why, HL_WHY, "the IR cannot be read: %s", m[0] ? m : "not LLVM 15 bitcode");
    mod = NULL;
  } else {
    LLVMDIBuilderRef b = LLVMCreateDIBuilder(mod);
    LLVMMetadataRef cu_file = NULL;
    int adopted = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
      if (LLVMIsDeclaration(f) || LLVMGetSubprogram(f)) continue;
      LLVMMetadataRef sp = new_subprogram(b, f, &cu_file);
      if (sp) adopt(c, f, sp), adopted++;
    }
    LLVMDIBuilderFinalize(b);
    LLVMDisposeDIBuilder(b);
    char *msg = NULL;
    if (!adopted) { /* nothing to add: not a failure */
      say(why, HL_WHY, "its IR has no debug locations there either");
      rc = 1;
    } else if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
      say(why, HL_WHY, "the IR with lines does not verify: %.*s", (int)strcspn(msg ? msg : "?", "\n"),
          msg ? msg : "?");
    } else {
      why[0] = 0;
      rc = emit(mod, obj, objn, why);
    }
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(mod);
  }
  LLVMDisposeMemoryBuffer(buf);
  LLVMContextDispose(c);
  return rc;
}
