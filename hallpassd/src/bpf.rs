//! A small classic-BPF assembler: instructions with symbolic labels, resolved to the relative
//! jump offsets the kernel wants. Pure: it makes no syscalls (installing is the launcher's job).
//!
//! Follows `Documentation/networking/filter.rst` and `include/uapi/linux/bpf_common.h`.

use std::collections::HashMap;

// include/uapi/linux/bpf_common.h
const BPF_LD: u16 = 0x00;
const BPF_JMP: u16 = 0x05;
const BPF_RET: u16 = 0x06;
const BPF_W: u16 = 0x00;
const BPF_ABS: u16 = 0x20;
const BPF_JA: u16 = 0x00;
const BPF_JEQ: u16 = 0x10;
const BPF_JGE: u16 = 0x30;
const BPF_JSET: u16 = 0x40;
const BPF_K: u16 = 0x00;

/// `struct sock_filter` (`include/uapi/linux/filter.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SockFilter {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// The kernel refuses longer programs (`BPF_MAXINSNS`).
pub const BPF_MAXINSNS: usize = 4096;

/// A jump target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Label(u32);

/// A conditional jump's test of the accumulator against a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Eq,
    Ge,
    /// Any bit of the constant set.
    Set,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Load(u32),
    Jump {
        cond: Cond,
        k: u32,
        jt: Label,
        jf: Label,
    },
    Goto(Label),
    Ret(u32),
    Bind(Label),
}

/// Why a program could not be assembled.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AsmError {
    #[error("label {0} is used but never placed")]
    Unbound(u32),
    #[error("label {0} is placed twice")]
    Rebound(u32),
    #[error("a jump goes backwards or too far ({0} instructions)")]
    BadJump(usize),
    #[error("the program has {0} instructions, more than the kernel's {BPF_MAXINSNS}")]
    TooLong(usize),
}

/// Builds a program; [`Asm::finish`] resolves the labels.
#[derive(Default)]
pub struct Asm {
    ops: Vec<Op>,
    labels: u32,
}

impl Asm {
    pub fn new() -> Asm {
        Asm::default()
    }

    /// A new label, placed later with [`Asm::bind`].
    pub fn label(&mut self) -> Label {
        self.labels += 1;
        Label(self.labels)
    }

    /// Places `label` at the next instruction.
    pub fn bind(&mut self, label: Label) {
        self.ops.push(Op::Bind(label));
    }

    /// `A = *(u32 *)(data + offset)`.
    pub fn load(&mut self, offset: u32) {
        self.ops.push(Op::Load(offset));
    }

    /// `if (A cond k) goto jt; else goto jf`.
    pub fn jump(&mut self, cond: Cond, k: u32, jt: Label, jf: Label) {
        self.ops.push(Op::Jump { cond, k, jt, jf });
    }

    pub fn goto(&mut self, target: Label) {
        self.ops.push(Op::Goto(target));
    }

    pub fn ret(&mut self, value: u32) {
        self.ops.push(Op::Ret(value));
    }

    /// The finished program. Jumps may only go forwards, as in every BPF program.
    pub fn finish(self) -> Result<Vec<SockFilter>, AsmError> {
        let mut at = HashMap::new();
        let mut pc = 0usize;
        for op in &self.ops {
            match op {
                Op::Bind(l) => {
                    if at.insert(*l, pc).is_some() {
                        return Err(AsmError::Rebound(l.0));
                    }
                }
                _ => pc += 1,
            }
        }
        if pc > BPF_MAXINSNS {
            return Err(AsmError::TooLong(pc));
        }
        let target = |l: &Label, from: usize| -> Result<usize, AsmError> {
            let to = *at.get(l).ok_or(AsmError::Unbound(l.0))?;
            // Offsets count from the instruction after the jump.
            to.checked_sub(from + 1).ok_or(AsmError::BadJump(0))
        };
        let mut out = Vec::with_capacity(pc);
        for op in &self.ops {
            let pc = out.len();
            let insn = match op {
                Op::Bind(_) => continue,
                Op::Load(off) => SockFilter {
                    code: BPF_LD | BPF_W | BPF_ABS,
                    jt: 0,
                    jf: 0,
                    k: *off,
                },
                Op::Ret(v) => SockFilter {
                    code: BPF_RET | BPF_K,
                    jt: 0,
                    jf: 0,
                    k: *v,
                },
                Op::Goto(l) => {
                    let off = target(l, pc)?;
                    SockFilter {
                        code: BPF_JMP | BPF_JA,
                        jt: 0,
                        jf: 0,
                        k: off as u32,
                    }
                }
                Op::Jump { cond, k, jt, jf } => {
                    let code = BPF_JMP
                        | BPF_K
                        | match cond {
                            Cond::Eq => BPF_JEQ,
                            Cond::Ge => BPF_JGE,
                            Cond::Set => BPF_JSET,
                        };
                    let short = |off: usize| u8::try_from(off).map_err(|_| AsmError::BadJump(off));
                    SockFilter {
                        code,
                        jt: short(target(jt, pc)?)?,
                        jf: short(target(jf, pc)?)?,
                        k: *k,
                    }
                }
            };
            out.push(insn);
        }
        Ok(out)
    }
}

/// The program as the bytes of a `struct sock_filter` array in native byte order, the form it
/// travels in to the launcher.
pub fn to_bytes(prog: &[SockFilter]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prog.len() * 8);
    for i in prog {
        out.extend_from_slice(&i.code.to_ne_bytes());
        out.push(i.jt);
        out.push(i.jf);
        out.extend_from_slice(&i.k.to_ne_bytes());
    }
    out
}

/// The inverse of [`to_bytes`]; `None` if the length is not a whole number of instructions.
pub fn from_bytes(bytes: &[u8]) -> Option<Vec<SockFilter>> {
    if !bytes.len().is_multiple_of(8) || bytes.is_empty() || bytes.len() / 8 > BPF_MAXINSNS {
        return None;
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| SockFilter {
                code: u16::from_ne_bytes([c[0], c[1]]),
                jt: c[2],
                jf: c[3],
                k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
            })
            .collect(),
    )
}

/// Runs a program over `data` the way the kernel does (for tests of what a filter decides).
pub fn run(prog: &[SockFilter], data: &[u8]) -> Option<u32> {
    let mut a: u32 = 0;
    let mut pc = 0usize;
    while let Some(i) = prog.get(pc) {
        pc += 1;
        match i.code {
            c if c == BPF_LD | BPF_W | BPF_ABS => {
                let o = i.k as usize;
                let b = data.get(o..o + 4)?;
                a = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
            }
            c if c == BPF_RET | BPF_K => return Some(i.k),
            c if c == BPF_JMP | BPF_JA => pc += i.k as usize,
            c => {
                let taken = match c & 0xf0 {
                    BPF_JEQ => a == i.k,
                    BPF_JGE => a >= i.k,
                    BPF_JSET => a & i.k != 0,
                    _ => return None,
                };
                pc += if taken { i.jt } else { i.jf } as usize;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_small_program() {
        let mut a = Asm::new();
        let allow = a.label();
        let deny = a.label();
        let next = a.label();
        a.load(0);
        a.jump(Cond::Eq, 42, deny, next);
        a.bind(next);
        a.jump(Cond::Set, 0x3, deny, allow);
        a.bind(allow);
        a.ret(0x7fff_0000);
        a.bind(deny);
        a.ret(0x0005_000d);
        let p = a.finish().unwrap();
        assert_eq!(
            p,
            vec![
                SockFilter {
                    code: 0x20,
                    jt: 0,
                    jf: 0,
                    k: 0
                },
                SockFilter {
                    code: 0x15,
                    jt: 2,
                    jf: 0,
                    k: 42
                },
                SockFilter {
                    code: 0x45,
                    jt: 1,
                    jf: 0,
                    k: 3
                },
                SockFilter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x7fff_0000
                },
                SockFilter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x0005_000d
                },
            ]
        );
        assert_eq!(from_bytes(&to_bytes(&p)).unwrap(), p);
        assert_eq!(run(&p, &42u32.to_ne_bytes()), Some(0x0005_000d));
        assert_eq!(run(&p, &4u32.to_ne_bytes()), Some(0x7fff_0000));
        assert_eq!(run(&p, &5u32.to_ne_bytes()), Some(0x0005_000d));
    }

    #[test]
    fn errors_are_caught() {
        let mut a = Asm::new();
        let l = a.label();
        a.goto(l);
        assert_eq!(a.finish(), Err(AsmError::Unbound(1)));

        let mut a = Asm::new();
        let l = a.label();
        a.bind(l);
        a.bind(l);
        assert_eq!(a.finish(), Err(AsmError::Rebound(1)));

        let mut a = Asm::new();
        let l = a.label();
        a.bind(l);
        a.goto(l);
        assert_eq!(a.finish(), Err(AsmError::BadJump(0)));

        let mut a = Asm::new();
        let far = a.label();
        a.jump(Cond::Eq, 1, far, far);
        for _ in 0..300 {
            a.ret(0);
        }
        a.bind(far);
        a.ret(1);
        assert_eq!(a.finish(), Err(AsmError::BadJump(300)));
        assert!(from_bytes(&[0; 7]).is_none());
    }
}
