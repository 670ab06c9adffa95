"""A two-node tensor-parallel launch (world size 4) started on node 0 only: the other node never joins the rendezvous."""
import argparse, datetime, os, torch, torch.distributed as dist, torch.multiprocessing as mp, common


def worker(local_rank, args):
    rank = args.node_rank * args.nproc_per_node + local_rank
    world = args.nnodes * args.nproc_per_node
    log = common.log(f"worker[rank={rank}]")
    log.info("Init torch distributed begin. init_method=tcp://%s:%d world_size=%d rank=%d", args.master_addr,
             args.master_port, world, rank)
    dist.init_process_group("gloo", init_method=f"tcp://{args.master_addr}:{args.master_port}", world_size=world,
                            rank=rank, timeout=datetime.timedelta(seconds=args.timeout))
    log.info("Init torch distributed ends.")
    t = torch.ones(4)
    dist.all_reduce(t)
    log.info("all_reduce check: %s", t.tolist())


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--nnodes", type=int, default=2)
    ap.add_argument("--node-rank", type=int, default=0)
    ap.add_argument("--nproc-per-node", type=int, default=2)
    ap.add_argument("--master-addr", default="127.0.0.1")
    ap.add_argument("--master-port", type=int, default=29533)
    ap.add_argument("--timeout", type=int, default=30)
    args = ap.parse_args()
    log = common.log("launcher")
    log.info("torch %s; nnodes=%d node_rank=%d nproc_per_node=%d master=%s:%d", torch.__version__, args.nnodes,
             args.node_rank, args.nproc_per_node, args.master_addr, args.master_port)
    mp.spawn(worker, args=(args,), nprocs=args.nproc_per_node, join=True)
