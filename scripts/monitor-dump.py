#!/usr/bin/env python3
"""Where a silent guest's vCPUs are: scripts/run-guest.sh calls this on a
stall, before it kills QEMU, with the path of QEMU's monitor socket and the
kernel's System.map. Three rounds, a second apart: stop the guest, read
every vCPU's registers (`info registers -a`) and 48 words of its kernel
stack, continue. Prints each vCPU's RIP and the kernel text addresses on
its stack as symbol+offset (a crude backtrace: stale words included). The
kernel must run without KASLR (nokaslr), or the symbols are wrong; the
output says whether the RIPs fall in the map's text at all."""
import bisect
import re
import socket
import sys
import time


def read_map(path):
    syms = []
    with open(path) as f:
        for line in f:
            a, t, name = line.split()[:3]
            if t in "tTwW":
                syms.append((int(a, 16), name))
    syms.sort()
    return syms


def symbol(syms, addr):
    i = bisect.bisect_right(syms, (addr, "\xff")) - 1
    if i < 0 or addr - syms[i][0] > 0x10000:
        return None
    return f"{syms[i][1]}+{addr - syms[i][0]:#x}"


class Monitor:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(10)
        self.s.connect(path)
        self.read()

    def read(self):
        buf = b""
        while not buf.endswith(b"(qemu) "):
            chunk = self.s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return buf.decode(errors="replace")

    def cmd(self, c):
        self.s.sendall(c.encode() + b"\n")
        return self.read()


def main():
    sock, smap = sys.argv[1], sys.argv[2]
    syms = read_map(smap)
    lo, hi = syms[0][0], syms[-1][0] + 0x10000
    m = Monitor(sock)
    for rnd in range(3):
        m.cmd("stop")
        regs = m.cmd("info registers -a")
        cpus = re.split(r"\nCPU#(\d+)", "\n" + regs)
        for k in range(1, len(cpus), 2):
            cpu, text = cpus[k], cpus[k + 1]
            rip = int(re.search(r"[RE]IP=([0-9a-f]+)", text).group(1), 16)
            rsp = int(re.search(r"[RE]SP=([0-9a-f]+)", text).group(1), 16)
            eflags = re.search(r"(?:RFL|EFL)=([0-9a-f]+)", text).group(1)
            hlt = re.search(r"HLT=(\d)", text)
            print(f"round {rnd} cpu {cpu}: RIP {rip:#x} {symbol(syms, rip) or '(not kernel text)'} "
                  f"RSP {rsp:#x} RFL {eflags} (IF {'on' if int(eflags, 16) & 0x200 else 'off'})"
                  f"{' halted' if hlt and hlt.group(1) == '1' else ''}")
            if not lo <= rip < hi:
                continue
            m.cmd(f"cpu {cpu}")
            words = re.findall(r"0x([0-9a-f]{16})", m.cmd(f"x/48gx {rsp:#x}").split(":", 1)[-1])
            for w in words:
                a = int(w, 16)
                if lo <= a < hi and symbol(syms, a):
                    print(f"    {symbol(syms, a)}")
        m.cmd("cont")
        time.sleep(1)


if __name__ == "__main__":
    main()
