// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/hyperN: the region ioctls and mmap.  Every open file has its own
 * handle table; a region is reachable only through the file that made it
 * (or a descriptor of that file passed on by its owner).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "hyper.h"

/* Region mmap offsets take 63 bits of the file offset. */
#if BITS_PER_LONG != 64
#error "hyper.ko needs a 64-bit kernel"
#endif

static dev_t hyk_devt;

static struct class hyk_class = {
	.name = HYK_NAME,
};

static bool hyk_zeroed(const __u64 *words, size_t n)
{
	while (n--)
		if (words[n])
			return false;
	return true;
}

static long hyk_ioc_info(struct hyk_file *hf, void __user *argp)
{
	struct hyk_pool *pool = &hf->hdev->pool;
	struct hyper_pool_info info;

	memset(&info, 0, sizeof(info));
	info.abi_version = HYPER_ABI_VERSION;
	info.source = pool->source;
	info.size = pool->size;
	/* A window that is System RAM has nothing to give to regions. */
	info.free = READ_ONCE(hf->hdev->mode) == HYK_MODE_DEVICE &&
		    hyk_pool_usable(pool) ? hyk_pool_free_bytes(pool) : 0;
	info.numa_node = pool->nid;
	info.nr_regions = atomic_read(&hf->nr_regions);
	info.page_size = PAGE_SIZE;
	info.huge_align = HYK_HUGE_ALIGN;
	info.max_batch = HYPER_BATCH_MAX;
	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * Gives region @r a handle of this file; the file owns the caller's
 * reference from then on, or it is dropped on failure.
 */
static int hyk_file_add(struct hyk_file *hf, struct hyk_region *r,
			u32 *handle)
{
	int ret;

	/*
	 * Cyclic: a freed handle is not given out again at once, so that a
	 * late transfer naming it finds nothing rather than a new region.
	 */
	ret = xa_alloc_cyclic(&hf->regions, handle, r,
			      XA_LIMIT(1, HYK_HANDLE_MAX), &hf->next_handle,
			      GFP_KERNEL);
	if (ret < 0) {
		hyk_region_put(r);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	r->handle = *handle;
	atomic_inc(&hf->nr_regions);
	return 0;
}

/* Takes back a handle the caller never learnt (copy_to_user() failed). */
static void hyk_file_unadd(struct hyk_file *hf, struct hyk_region *r,
			   u32 handle)
{
	/*
	 * Nothing may be left.  But another thread may have freed it
	 * meanwhile, and even reused the number: take it out only if it is
	 * still this region.
	 */
	if (xa_cmpxchg(&hf->regions, handle, r, NULL, 0) == r) {
		atomic_dec(&hf->nr_regions);
		hyk_region_put(r);
	}
}

static long hyk_ioc_alloc(struct hyk_file *hf, void __user *argp)
{
	struct hyper_alloc a;
	struct hyk_region *r;
	u32 handle;
	int ret;

	if (copy_from_user(&a, argp, sizeof(a)))
		return -EFAULT;
	if (a.flags & ~HYPER_ALLOC_FLAGS_MASK || a.handle || a.mmap_offset ||
	    !hyk_zeroed(a.reserved, ARRAY_SIZE(a.reserved)))
		return -EINVAL;
	if (!a.size || !PAGE_ALIGNED(a.size))
		return -EINVAL;
	if (a.size > HYK_REGION_MAX)
		return -EOVERFLOW;
	if (a.size > hf->hdev->pool.size)
		return -ENOMEM;

	/*
	 * The mode cannot change while a region is being made; a switch
	 * (memory hotplug) may hold it long, so waiting for it is killable.
	 */
	if (down_read_killable(&hf->hdev->mode_sem))
		return -EINTR;
	if (hf->hdev->mode != HYK_MODE_DEVICE)
		r = ERR_PTR(-EBUSY);
	else if (!hyk_pool_usable(&hf->hdev->pool))
		r = ERR_PTR(-EIO);
	else
		r = hyk_region_create(hf->hdev, a.size, a.flags);
	up_read(&hf->hdev->mode_sem);
	if (IS_ERR(r))
		return PTR_ERR(r);
	ret = hyk_file_add(hf, r, &handle);
	if (ret)
		return ret;
	a.handle = handle;
	a.mmap_offset = (u64)handle << HYK_MMAP_SHIFT;
	if (copy_to_user(argp, &a, sizeof(a))) {
		hyk_file_unadd(hf, r, handle);
		return -EFAULT;
	}
	return 0;
}

static long hyk_ioc_free(struct hyk_file *hf, void __user *argp)
{
	struct hyk_region *r;
	struct hyper_free f;

	if (copy_from_user(&f, argp, sizeof(f)))
		return -EFAULT;
	if (f.flags || !hyk_zeroed(f.reserved, ARRAY_SIZE(f.reserved)))
		return -EINVAL;
	if (!f.handle || f.handle > HYK_HANDLE_MAX)
		return -ENOENT;
	r = xa_erase(&hf->regions, f.handle);
	if (!r)
		return -ENOENT;
	atomic_dec(&hf->nr_regions);
	hyk_region_put(r);
	return 0;
}

static long hyk_ioc_query(struct hyk_file *hf, void __user *argp)
{
	struct hyper_region_info q;
	struct hyk_region *r;

	if (copy_from_user(&q, argp, sizeof(q)))
		return -EFAULT;
	if (q.flags || q.size || q.mmap_offset ||
	    !hyk_zeroed(q.reserved, ARRAY_SIZE(q.reserved)))
		return -EINVAL;
	r = hyk_region_lookup(hf, q.handle);
	if (!r)
		return -ENOENT;
	q.flags = r->flags;
	if (r->obj)
		q.flags |= HYPER_REGION_OBJECT |
			   (READ_ONCE(r->obj->rdonly) ? HYPER_REGION_RDONLY : 0);
	q.size = r->size;
	/* Not r->handle: it is set only after the region is published. */
	q.mmap_offset = (u64)q.handle << HYK_MMAP_SHIFT;
	hyk_region_put(r);
	return copy_to_user(argp, &q, sizeof(q)) ? -EFAULT : 0;
}

static const char *hyk_obj_cmd(unsigned int cmd)
{
	switch (cmd) {
	case HYPER_IOC_OBJ_CREATE:
		return "OBJ_CREATE";
	case HYPER_IOC_OBJ_OPEN:
		return "OBJ_OPEN";
	default:
		return "OBJ_DELETE";
	}
}

/* 1 to 63 characters of [A-Za-z0-9._-], then NULs to the end. */
static bool hyk_obj_name_ok(const char *name)
{
	size_t n = strnlen(name, HYPER_OBJ_NAME_LEN), i;

	if (!n || n == HYPER_OBJ_NAME_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum(name[i]) && !strchr("._-", name[i]))
			return false;
	return !memchr_inv(name + n, 0, HYPER_OBJ_NAME_LEN - n);
}

/* Checks the user's fields of a struct hyper_obj: 0 or -EINVAL. */
static int hyk_obj_args(struct hyk_file *hf, unsigned int cmd,
			const struct hyper_obj *o)
{
	const char *what = hyk_obj_cmd(cmd);
	u64 pool_size = hf->hdev->pool.size;

	if (!hyk_obj_name_ok(o->name)) {
		pr_info_ratelimited("%s refused: an object's name is 1 to %d characters of [A-Za-z0-9._-], NUL-terminated and zero-padded: rename it\n",
				    what, HYPER_OBJ_NAME_LEN - 1);
		return -EINVAL;
	}
	if (o->flags || o->reserved0 ||
	    !hyk_zeroed(o->reserved, ARRAY_SIZE(o->reserved))) {
		pr_info_ratelimited("%s refused: flags and reserved fields must be zero: clear them\n",
				    what);
		return -EINVAL;
	}
	if (cmd == HYPER_IOC_OBJ_CREATE &&
	    (!o->size || !PAGE_ALIGNED(o->size) || o->size > pool_size ||
	     o->size > HYK_REGION_MAX)) {
		pr_info_ratelimited("OBJ_CREATE refused: size %llu is not a non-zero multiple of %lu up to the pool's %llu bytes: fix the size\n",
				    o->size, PAGE_SIZE,
				    min_t(u64, pool_size, HYK_REGION_MAX));
		return -EINVAL;
	}
	if (cmd == HYPER_IOC_OBJ_DELETE && o->size) {
		pr_info_ratelimited("OBJ_DELETE refused: size must be zero: clear it\n");
		return -EINVAL;
	}
	return 0;
}

/* HYPER_IOC_OBJ_CREATE, _OPEN and _DELETE. */
static long hyk_ioc_obj(struct hyk_file *hf, unsigned int cmd,
			void __user *argp)
{
	struct hyk_dev *hdev = hf->hdev;
	struct hyk_region *r;
	struct hyper_obj o;
	u32 handle;
	int ret;

	if (copy_from_user(&o, argp, sizeof(o)))
		return -EFAULT;
	ret = hyk_obj_args(hf, cmd, &o);
	if (ret)
		return ret;
	if (cmd == HYPER_IOC_OBJ_DELETE)
		return hyk_obj_delete(hdev, o.name);

	/* As ALLOC: objects are pool memory, which only device mode lends. */
	if (down_read_killable(&hdev->mode_sem))
		return -EINTR;
	if (hdev->mode != HYK_MODE_DEVICE)
		ret = -EBUSY;
	else if (!hyk_pool_usable(&hdev->pool))
		ret = -EIO;
	else if (cmd == HYPER_IOC_OBJ_CREATE)
		ret = hyk_obj_create(hdev, o.name, o.size, &r);
	else
		ret = hyk_obj_open(hdev, o.name, &r);
	up_read(&hdev->mode_sem);
	if (ret)
		return ret;
	ret = hyk_file_add(hf, r, &handle);
	if (ret)
		return ret;
	o.size = r->size;
	o.handle = handle;
	o.mmap_offset = (u64)handle << HYK_MMAP_SHIFT;
	o.node = r->obj->node;
	if (copy_to_user(argp, &o, sizeof(o))) {
		hyk_file_unadd(hf, r, handle);
		return -EFAULT;
	}
	return 0;
}

static long hyk_ioc_obj_publish(struct hyk_file *hf, void __user *argp)
{
	struct hyper_obj_publish p;
	struct hyk_region *r;
	int ret;

	if (copy_from_user(&p, argp, sizeof(p)))
		return -EFAULT;
	if (p.flags || !hyk_zeroed(p.reserved, ARRAY_SIZE(p.reserved))) {
		pr_info_ratelimited("OBJ_PUBLISH refused: flags and reserved fields must be zero: clear them\n");
		return -EINVAL;
	}
	r = hyk_region_lookup(hf, p.handle);
	if (!r || !r->obj) {
		pr_info_ratelimited("OBJ_PUBLISH refused: handle %u is not an object this file created: pass OBJ_CREATE's handle\n",
				    p.handle);
		if (r)
			hyk_region_put(r);
		return -EINVAL;
	}
	ret = hyk_obj_publish(r);
	hyk_region_put(r);
	return ret;
}

static long hyk_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct hyk_file *hf = file->private_data;
	void __user *argp = (void __user *)arg;

	/*
	 * Taking or giving back pool memory changes the device, as a write
	 * does: a read-only open may only look (Documentation/uapi.md).
	 */
	switch (cmd) {
	case HYPER_IOC_INFO:
		return hyk_ioc_info(hf, argp);
	case HYPER_IOC_ALLOC:
		if (!(file->f_mode & FMODE_WRITE))
			return -EBADF;
		return hyk_ioc_alloc(hf, argp);
	case HYPER_IOC_FREE:
		if (!(file->f_mode & FMODE_WRITE))
			return -EBADF;
		return hyk_ioc_free(hf, argp);
	case HYPER_IOC_QUERY:
		return hyk_ioc_query(hf, argp);
	case HYPER_IOC_OBJ_CREATE:
	case HYPER_IOC_OBJ_DELETE:
		if (!(file->f_mode & FMODE_WRITE))
			return -EBADF;
		return hyk_ioc_obj(hf, cmd, argp);
	case HYPER_IOC_OBJ_PUBLISH:
		if (!(file->f_mode & FMODE_WRITE))
			return -EBADF;
		return hyk_ioc_obj_publish(hf, argp);
	case HYPER_IOC_OBJ_OPEN:
		if (!(file->f_mode & FMODE_READ))
			return -EBADF;
		return hyk_ioc_obj(hf, cmd, argp);
	default:
		return -ENOTTY;
	}
}

static void hyk_vm_open(struct vm_area_struct *vma)
{
	struct hyk_region *r = vma->vm_private_data;

	hyk_region_get(r);
	if (r->obj)
		hyk_obj_vma_open(r, vma);
}

static void hyk_vm_close(struct vm_area_struct *vma)
{
	struct hyk_region *r = vma->vm_private_data;

	if (r->obj)
		hyk_obj_vma_close(r, vma);
	hyk_region_put(r);
}

#define HYK_PGOFF_SHIFT		(HYK_MMAP_SHIFT - PAGE_SHIFT)
#define HYK_PGOFF_MASK		((1UL << HYK_PGOFF_SHIFT) - 1)
/* Pages handed to vm_insert_pages() at a time. */
#define HYK_MAP_BATCH		(PAGE_SIZE / sizeof(struct page *))

/*
 * mmap() maps every page at once; a page is only missing again after
 * madvise(MADV_DONTNEED) or the like zapped it.  Hand the core its page.
 */
static vm_fault_t hyk_vm_fault(struct vm_fault *vmf)
{
	struct hyk_region *r = vmf->vma->vm_private_data;
	u64 off = (u64)(vmf->pgoff & HYK_PGOFF_MASK) << PAGE_SHIFT;
	struct page *page;

	if (off >= r->size)
		return VM_FAULT_SIGBUS;
	page = hyk_pool_page(&r->hdev->pool, r->off + off);
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct hyk_vm_ops = {
	.open = hyk_vm_open,
	.close = hyk_vm_close,
	.fault = hyk_vm_fault,
};

/*
 * Map the pages themselves, not their PFNs: a VM_MIXEDMAP mapping of
 * normal page table entries, which get_user_pages() and pin_user_pages()
 * (FOLL_LONGTERM too) accept, so that O_DIRECT, io_uring fixed buffers,
 * vmsplice() and DMA registrations work on pool memory.
 */
static int hyk_map_pages(struct vm_area_struct *vma, struct hyk_region *r,
			 u64 off)
{
	u64 len = vma->vm_end - vma->vm_start;
	struct page **pages;
	u64 done = 0;
	int ret = 0;

	pages = kmalloc_array(HYK_MAP_BATCH, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	while (done < len && !ret) {
		unsigned long n = min_t(u64, HYK_MAP_BATCH,
					(len - done) >> PAGE_SHIFT);
		unsigned long i, left = n;

		for (i = 0; i < n; i++)
			pages[i] = hyk_pool_page(&r->hdev->pool,
						 r->off + off + done +
						 (i << PAGE_SHIFT));
		ret = vm_insert_pages(vma, vma->vm_start + done, pages, &left);
		if (!ret && left)
			ret = -EFAULT;
		done += (u64)n << PAGE_SHIFT;
		cond_resched();
	}
	kfree(pages);
	return ret;
}

static int hyk_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct hyk_file *hf = file->private_data;
	unsigned long handle = vma->vm_pgoff >> HYK_PGOFF_SHIFT;
	u64 off = (u64)(vma->vm_pgoff & HYK_PGOFF_MASK) << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	struct hyk_region *r;
	int ret;

	/*
	 * Private (copy-on-write) mappings of pool memory make no sense.
	 * VM_MAYSHARE, not VM_SHARED: a read-only open maps MAP_SHARED
	 * without VM_SHARED.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (!handle || handle > HYK_HANDLE_MAX)
		return -EINVAL;
	r = hyk_region_lookup(hf, handle);
	if (!r)
		return -EINVAL;
	if (off >= r->size || len > r->size - off) {
		ret = -EINVAL;
		goto out_put;
	}

	/* A mapping never grows past its region, nor lands in core dumps. */
	hyk_vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP);
	/*
	 * A shared object's handle may be read-only: refused before a page
	 * is inserted, which another thread could write through at once.
	 */
	if (r->obj) {
		ret = hyk_obj_mmap(r, vma);
		if (ret)
			goto out_put;
	}
	/*
	 * On failure, mmap() zaps what was inserted; a page it still holds
	 * then keeps the region's range held (hyk_pool_free()).
	 */
	ret = hyk_map_pages(vma, r, off);
	if (ret) {
		if (r->obj)
			hyk_obj_vma_close(r, vma);
		goto out_put;
	}
	/* The mapping keeps the memory alive after HYPER_IOC_FREE or close. */
	vma->vm_private_data = r;
	vma->vm_ops = &hyk_vm_ops;
	return 0;

out_put:
	hyk_region_put(r);
	return ret;
}

static int hyk_open(struct inode *inode, struct file *file)
{
	struct hyk_file *hf;

	hf = kzalloc(sizeof(*hf), GFP_KERNEL);
	if (!hf)
		return -ENOMEM;
	hf->hdev = container_of(inode->i_cdev, struct hyk_dev, cdev);
	xa_init_flags(&hf->regions, XA_FLAGS_ALLOC1);
	hyk_uring_file_init(hf);
	file->private_data = hf;
	return 0;
}

static int hyk_release(struct inode *inode, struct file *file)
{
	struct hyk_file *hf = file->private_data;
	struct hyk_region *r;
	unsigned long idx;

	xa_for_each(&hf->regions, idx, r) {
		xa_erase(&hf->regions, idx);
		hyk_region_put(r);
	}
	xa_destroy(&hf->regions);
	hyk_uring_file_release(hf);
	kfree(hf);
	return 0;
}

/*
 * msync(MS_SYNC) and fsync(2).  @start and @end are mmap offsets, which
 * name regions by handle: each region of the range that this file still
 * holds is written back (hyk_region_flush()).  There is no metadata, so
 * @datasync changes nothing.
 */
static int hyk_fsync(struct file *file, loff_t start, loff_t end,
		     int datasync)
{
	const u64 mask = BIT_ULL(HYK_MMAP_SHIFT) - 1;
	struct hyk_file *hf = file->private_data;
	u64 first, last, lo, hi;
	struct hyk_region *r;
	unsigned long idx;
	void *entry;

	if (start < 0 || end < start)
		return -EINVAL;
	first = (u64)start >> HYK_MMAP_SHIFT;
	last = (u64)end >> HYK_MMAP_SHIFT;
	xa_for_each_range(&hf->regions, idx, entry, first,
			  min_t(u64, last, HYK_HANDLE_MAX)) {
		r = hyk_region_lookup(hf, idx);
		if (!r)
			continue;
		lo = idx == first ? (u64)start & mask : 0;
		hi = idx == last ? ((u64)end & mask) + 1 : r->size;
		hi = min(hi, r->size);
		if (lo < hi)
			hyk_region_flush(r, lo, hi - lo);
		hyk_region_put(r);
	}
	return 0;
}

static const struct file_operations hyk_fops = {
	.owner = THIS_MODULE,
	.open = hyk_open,
	.release = hyk_release,
	.unlocked_ioctl = hyk_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = hyk_mmap,
	.uring_cmd = hyk_uring_cmd,
	.fsync = hyk_fsync,
	.llseek = noop_llseek,
};

/**
 * hyk_chardev_add() - create /dev/hyperN and its sysfs directory
 * @hdev:	device with its pool set up and @hdev->id chosen
 *
 * Return: 0 or -errno.
 */
int hyk_chardev_add(struct hyk_dev *hdev)
{
	dev_t devt = MKDEV(MAJOR(hyk_devt), hdev->id);
	int ret;

	cdev_init(&hdev->cdev, &hyk_fops);
	hdev->cdev.owner = THIS_MODULE;
	ret = cdev_add(&hdev->cdev, devt, 1);
	if (ret)
		return ret;
	hdev->dev = device_create_with_groups(&hyk_class, NULL, devt, hdev,
					      hyk_dev_groups, HYK_NAME "%d",
					      hdev->id);
	if (IS_ERR(hdev->dev)) {
		ret = PTR_ERR(hdev->dev);
		goto out_cdev;
	}
	return 0;

out_cdev:
	cdev_del(&hdev->cdev);
	return ret;
}

/**
 * hyk_chardev_del() - remove what hyk_chardev_add() made
 * @hdev:	the device; no file may have it open (the module reference
 *		that every open file holds guarantees that at unload)
 */
void hyk_chardev_del(struct hyk_dev *hdev)
{
	device_destroy(&hyk_class, hdev->dev->devt);
	cdev_del(&hdev->cdev);
}

/**
 * hyk_chardev_init() - register the class and the device numbers
 *
 * Return: 0 or -errno.
 */
int hyk_chardev_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&hyk_devt, 0, HYK_MAX_DEVS, HYK_NAME);
	if (ret)
		return ret;
	ret = class_register(&hyk_class);
	if (ret)
		goto out_chrdev;
	return 0;

out_chrdev:
	unregister_chrdev_region(hyk_devt, HYK_MAX_DEVS);
	return ret;
}

/**
 * hyk_chardev_exit() - undo hyk_chardev_init()
 */
void hyk_chardev_exit(void)
{
	class_unregister(&hyk_class);
	unregister_chrdev_region(hyk_devt, HYK_MAX_DEVS);
}
