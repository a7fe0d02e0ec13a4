from barlow_twins.learning_rate import WarmUpSchedule
from barlow_twins.loss import loss
from barlow_twins.training import distributed_train_step, train_step
