"""Set-up for kv_budget_shared_gpu.sh: another job on the same GPU that holds about 45% of its memory. Prints nothing."""
import sys, time, torch
total = torch.cuda.get_device_properties(0).total_memory
held = torch.empty(int(total * 0.45), dtype=torch.uint8, device="cuda")
held.fill_(1)
torch.cuda.synchronize()
open(sys.argv[1], "w").write("ready\n")
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 120)
