"""Where fine-tuning keeps its data and checkpoints (constants: the params check reads them)."""

TRAIN_RAW = "data/raw/{p.finetune.train.name}"
TRAIN_MANIFEST = "data/finetune/train.json"
TRAIN_CAPTIONS = "data/finetune/train_captions.json"
BASE_CARD = "results/finetune/base.json"
FINETUNED = "results/finetune/{variant}/model.safetensors"
WISE = "results/finetune/wise/{alpha}/model.safetensors"
# fine-tuning on labelled images (FLYP, standard): the class set (`vlstress testset`), the weights
LABELLED_TRAIN = "data/finetune/labelled"
LABELLED_FINETUNED = "results/finetune/labelled/{labelled}/model.safetensors"
